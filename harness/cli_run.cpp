// Verb: run. One family and variant on given input tensors (a captured activation, say): the
// host model or the device kernel, outputs written to files, so a user can push real data
// through both and compare.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "catalog.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "outfile.hpp"
#include "files.hpp"
#include "host_run.hpp"
#include "registry.hpp"
#include "npy.hpp"

namespace bitgate {

namespace {

struct RunOpts {
    std::string family, variant, shape, profile = "uniform", out = ".";
    std::vector<std::string> inputs;
    uint64_t seed = 1;
    bool device = false, save_inputs = false;
};

// Room for a .npy header around the data of an input file (numpy's are 128 bytes or a few KiB).
constexpr uint64_t kNpyHeaderRoom = uint64_t(1) << 20;

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> w;
    std::string cur;
    for (char c : s) {
        if (c == ' ' || c == ',') { if (!cur.empty()) w.push_back(cur); cur.clear(); }
        else cur += c;
    }
    if (!cur.empty()) w.push_back(cur);
    return w;
}

// The .npy shape of a tensor: the family's dims when they hold exactly its bytes, Q8_0 blocks
// as (blocks, 34), else one axis of elements.
std::vector<int64_t> npy_shape(const TensorSpec& t, const Shape& s, size_t bytes) {
    const size_t item = npy::itemsize(npy::dtype_of(t.elem));
    if (t.dims) {
        std::vector<int64_t> d = t.dims(s);
        uint64_t n = 1;
        bool ok = true;
        for (int64_t x : d) ok = ok && x >= 0 && !__builtin_mul_overflow(n, uint64_t(x), &n);
        if (ok && n * item == bytes) return d;
    }
    if (t.elem == Elem::q8_0 && bytes % elem_size(Elem::q8_0) == 0)
        return {int64_t(bytes / elem_size(Elem::q8_0)), int64_t(elem_size(Elem::q8_0))};
    return {int64_t(bytes / item)};
}

void write_tensor(const std::string& dir, const TensorSpec& t, const Shape& s, const Bytes& b, const char* kind) {
    const std::string path = dir + "/" + t.name + ".npy";
    npy::write(path, b, npy_shape(t, s, b.size()), std::string(npy::dtype_of(t.elem)));
    std::printf("%-6s %-6s %s (%zu bytes, xxh3-128 %s)\n", kind, t.name.c_str(), path.c_str(), b.size(),
                digest128(b).c_str());
}

void make_out_dir(const std::string& dir) {
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) return;
    if (std::filesystem::exists(dir, ec)) throw BadInput("--out " + dir + ": not a directory");
    std::filesystem::create_directories(dir, ec);
    if (ec) throw BadInput("--out " + dir + ": cannot create the directory (" + ec.message() + ")");
}

int do_run(const RunOpts& o) {
    const FamilySpec& f = family(o.family);
    const VariantSpec& v = variant(f, o.variant);
    const Shape s = parse_shape(f, words(o.shape), "--shape");
    if (std::string why = shape_problem(f, &v, s); !why.empty()) throw BadInput("--shape: " + why);
    if (!known_profile(f, o.profile)) {
        std::string known;
        for (const auto& p : f.profiles) known += (known.empty() ? "" : ", ") + p;
        throw BadInput("--profile " + o.profile + ": unknown profile for " + f.name + " (its own: " + known +
                       "; any f32 profile where its inputs are f32)");
    }
    // An output over a given input would replace what the run read (a replay from --out's own
    // files): refused before the run. --save-inputs may rewrite a given input with its own bytes.
    std::vector<std::string> given;
    for (const std::string& spec : o.inputs) given.push_back(spec.substr(spec.find('=') + 1));
    for (const TensorSpec* t : tensors_of(f, Role::output)) refuse_input_as_output(o.out + "/" + t->name + ".npy", given);
    std::vector<Bytes> in = make_inputs(f, s, o.seed, o.profile);
    const auto ins = tensors_of(f, Role::input);
    for (const std::string& spec : o.inputs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos) throw BadInput("--input " + spec + ": expected NAME=FILE");
        const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
        size_t i = 0;
        while (i < ins.size() && ins[i]->name != name) ++i;
        if (i == ins.size()) throw BadInput("--input " + spec + ": " + f.name + " has no input '" + name + "'");
        regular_file_size(path, in[i].size() + kNpyHeaderRoom, "input " + name);
        in[i] = npy::read_for(path, ins[i]->elem, in[i].size()).bytes;
        std::printf("input  %-6s %s (%zu bytes)\n", name.c_str(), path.c_str(), in[i].size());
    }
    make_out_dir(o.out);
    if (o.save_inputs)
        for (size_t i = 0; i < ins.size(); ++i) write_tensor(o.out, *ins[i], s, in[i], "saved");
    std::vector<Bytes> out;
    if (o.device) {
        require_gpu();
        if (!v.launch) throw BadInput(f.name + "/" + v.name + " has no device launcher");
        std::vector<DeviceBuffer> bi, bo, bw;
        DeviceIo io{.family = &f};
        for (const Bytes& b : in) { bi.emplace_back(b.size()); bi.back().fill(0); bi.back().upload(b); io.in.push_back(bi.back().data()); }
        for (size_t n : tensor_bytes(f, s, Role::output)) { bo.emplace_back(n); bo.back().fill(kPoisonA); io.out.push_back(bo.back().data()); }
        for (size_t n : tensor_bytes(f, s, Role::workspace)) { bw.emplace_back(n); bw.back().fill(kPoisonA); io.work.push_back(bw.back().data()); }
        if (v.prepare) v.prepare(s, io);
        v.launch(s, io);
        if (std::string err = device_sync(); !err.empty()) throw std::runtime_error("launch failed: " + err);
        for (auto& b : bo) out.push_back(b.download());
    } else {
        out = run_model(f, v, s, in, false).out;
    }
    const auto outs = tensors_of(f, Role::output);
    for (size_t i = 0; i < outs.size(); ++i) write_tensor(o.out, *outs[i], s, out[i], "output");
    return exit_ok;
}

}  // namespace

void add_run_verb(CLI::App& app, int& rc) {
    auto o = std::make_shared<RunOpts>();  // one set per App, so a second parse starts clean
    auto* c = app.add_subcommand("run", "run one family/variant on given inputs; write its outputs");
    c->add_option("--family", o->family, "family")->required();
    c->add_option("--variant", o->variant, "variant")->required();
    c->add_option("--shape", o->shape, "dimensions, e.g. \"k=896\"")->required();
    c->add_option("--input", o->inputs, "NAME=FILE (.npy, or raw bytes); inputs not given are generated");
    c->add_option("--seed", o->seed, "seed for generated inputs (default 1)");
    c->add_option("--profile", o->profile, "profile for generated inputs (default uniform)");
    c->add_option("--out", o->out, "directory for the outputs (NAME.npy), created when missing");
    c->add_flag("--save-inputs", o->save_inputs, "also write every input, given or generated, as NAME.npy");
    c->add_flag("--device", o->device, "run the CUDA kernel instead of the host model");
    c->callback([o, &rc] { rc = do_run(*o); });
}

}  // namespace bitgate
