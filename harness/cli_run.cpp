// Verb: run. One family and variant on given input tensors (a captured activation, say): the
// host model or the device kernel, outputs written to files, so a user can push real data
// through both and compare.
#include <cstdio>
#include <fstream>
#include <map>

#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "host_run.hpp"
#include "registry.hpp"
#include "npy.hpp"

namespace bitgate {

namespace {

struct RunOpts {
    std::string family, variant, shape, profile = "uniform", out = ".";
    std::vector<std::string> inputs;
    uint64_t seed = 1;
    bool device = false;
};

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

int do_run(const RunOpts& o) {
    const FamilySpec& f = family(o.family);
    const VariantSpec& v = variant(f, o.variant);
    const Shape s = parse_shape(f, words(o.shape), "--shape");
    if (std::string why = shape_problem(f, &v, s); !why.empty()) throw BadInput("--shape: " + why);
    std::vector<Bytes> in = make_inputs(f, s, o.seed, o.profile);
    const auto ins = tensors_of(f, Role::input);
    for (const std::string& spec : o.inputs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos) throw BadInput("--input " + spec + ": expected NAME=FILE");
        const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
        size_t i = 0;
        while (i < ins.size() && ins[i]->name != name) ++i;
        if (i == ins.size()) throw BadInput("--input " + spec + ": " + f.name + " has no input '" + name + "'");
        in[i] = npy::read_for(path, ins[i]->elem, in[i].size()).bytes;
        std::printf("input  %-6s %s (%zu bytes)\n", name.c_str(), path.c_str(), in[i].size());
    }
    std::vector<Bytes> out;
    if (o.device) {
        if (std::string why = gpu_missing(); !why.empty()) throw NoGpu(why);
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
    for (size_t i = 0; i < outs.size(); ++i) {
        const std::string path = o.out + "/" + outs[i]->name + ".npy";
        const std::string dtype(npy::dtype_of(outs[i]->elem));
        npy::write(path, out[i], {int64_t(out[i].size() / npy::itemsize(dtype))}, dtype);
        std::printf("output %-6s %s (%zu bytes, xxh3-128 %s)\n", outs[i]->name.c_str(), path.c_str(), out[i].size(),
                    digest128(out[i]).c_str());
    }
    return exit_ok;
}

}  // namespace

void add_run_verb(CLI::App& app, int& rc) {
    static RunOpts o;
    auto* c = app.add_subcommand("run", "run one family/variant on given inputs; write its outputs");
    c->add_option("--family", o.family, "family")->required();
    c->add_option("--variant", o.variant, "variant")->required();
    c->add_option("--shape", o.shape, "dimensions, e.g. \"k=896\"")->required();
    c->add_option("--input", o.inputs, "NAME=FILE (.npy, or raw bytes); inputs not given are generated");
    c->add_option("--seed", o.seed, "seed for generated inputs (default 1)");
    c->add_option("--profile", o.profile, "profile for generated inputs (default uniform)");
    c->add_option("--out", o.out, "directory for the outputs (NAME.npy)");
    c->add_flag("--device", o.device, "run the CUDA kernel instead of the host model");
    c->callback([&rc] { rc = do_run(o); });
}

}  // namespace bitgate
