// `bitgate model synth|info`: synthetic GGUF files from the presets, and what a GGUF file holds.
#include "cli_model.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli.hpp"
#include "errors.hpp"
#include "outfile.hpp"
#include "spkl.hpp"
#include "weights.hpp"

namespace bitgate {

void add_model_verbs(CLI::App& app, int& rc) {
    CLI::App* model = app.add_subcommand("model", "Model files (GGUF, qwen2) and the forward pass");
    model->require_subcommand(1);
    add_model_file_verbs(*model, rc);
    add_model_forward_verbs(*model, rc);
}

namespace {

std::string shape_str(const std::vector<int64_t>& ne) {
    std::string s = "{";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "}";
}

nlohmann::json value_json(const gguf::Value& v) {
    using gguf::VType;
    switch (v.type) {
        case VType::str: return v.s;
        case VType::boolean: return v.raw != 0;
        case VType::f32: case VType::f64: return v.as_double();
        case VType::u64: return v.raw;
        case VType::arr: {
            // Arrays: their element type and length (tokenizer arrays are long).
            return {{"array", gguf::vtype_name(v.elem)}, {"length", v.items.size()}};
        }
        default: {
            int64_t x = 0;
            v.int_in(INT64_MIN, INT64_MAX, x);
            return x;
        }
    }
}

struct InfoArgs {
    std::string file, json;
    bool md5 = false, meta = false, raw = false;
};

int run_info(const InfoArgs& a) {
    gguf::Mapping map(a.file);
    const gguf::File f = gguf::parse(map.bytes(), a.file);
    // Every check first: a bad file gets its one-line error and nothing else.
    std::optional<model::Model> m;
    if (!a.raw) m.emplace(model::model_from_gguf(f, a.file));
    // The JSON target too (never over the model it describes), before anything is printed.
    std::optional<OutFile> out;
    if (!a.json.empty()) out.emplace(a.json, std::vector<std::string>{a.file});
    nlohmann::json j;
    j["file"] = a.file;
    j["bytes"] = f.file_size;
    j["gguf_version"] = f.version;
    j["alignment"] = f.alignment;
    j["data_offset"] = f.data_offset;
    std::printf("file         : %s (%llu bytes)\n", a.file.c_str(), static_cast<unsigned long long>(f.file_size));
    std::printf("gguf         : version %u, alignment %u, %zu metadata keys, %zu tensors, data at byte %llu\n",
                f.version, f.alignment, f.kv.size(), f.tensors.size(), static_cast<unsigned long long>(f.data_offset));
    if (m) {
        const model::Hparams& h = m->hp;
        const gguf::Value* name = f.find("general.name");
        std::printf("architecture : %s\n", h.arch.c_str());
        if (name && name->type == gguf::VType::str) std::printf("name         : %s\n", name->s.c_str());
        std::printf("layers       : %lld\n", static_cast<long long>(h.n_layer));
        std::printf("embedding    : %lld\n", static_cast<long long>(h.n_embd));
        std::printf("feed_forward : %lld\n", static_cast<long long>(h.n_ff));
        std::printf("heads        : %lld (kv heads %lld, head_dim %lld)\n", static_cast<long long>(h.n_head),
                    static_cast<long long>(h.n_head_kv), static_cast<long long>(h.head_dim()));
        std::printf("vocab        : %lld\n", static_cast<long long>(h.n_vocab));
        std::printf("context      : %lld\n", static_cast<long long>(h.n_ctx));
        std::printf("rope_base    : %.9g\n", static_cast<double>(h.rope_base));
        std::printf("rms_eps      : %.9g\n", static_cast<double>(h.rms_eps));
        std::printf("output       : %s\n", h.tied ? "tied (token_embd.weight)" : "output.weight");
        j["architecture"] = h.arch;
        j["hparams"] = {{"n_layer", h.n_layer}, {"n_embd", h.n_embd},       {"n_ff", h.n_ff},
                        {"n_head", h.n_head},   {"n_head_kv", h.n_head_kv}, {"head_dim", h.head_dim()},
                        {"n_vocab", h.n_vocab}, {"n_ctx", h.n_ctx},         {"rope_base", h.rope_base},
                        {"rms_eps", h.rms_eps}, {"tied", h.tied}};
    }
    nlohmann::json meta = nlohmann::json::object();
    if (a.meta) std::printf("metadata:\n");
    for (const gguf::KV& e : f.kv) {
        meta[e.key] = {{"type", gguf::vtype_name(e.value.type)}, {"value", value_json(e.value)}};
        if (a.meta) std::printf("  %-44s %-8s %s\n", e.key.c_str(), gguf::vtype_name(e.value.type), e.value.show().c_str());
    }
    j["metadata"] = meta;

    std::printf("tensors:\n");
    nlohmann::json ts = nlohmann::json::array();
    std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // type -> tensors, bytes
    uint64_t total = 0, params = 0;
    for (const gguf::TensorInfo& t : f.tensors) {
        uint64_t n = 1;
        for (int64_t d : t.ne) n *= static_cast<uint64_t>(d);  // bounded: the bytes are in the file
        params += n;
        total += t.size;
        auto& bt = by_type[gguf::type_name(t.type)];
        bt.first += 1;
        bt.second += t.size;
        nlohmann::json jt = {{"name", t.name}, {"type", gguf::type_name(t.type)}, {"type_id", t.type},
                             {"ne", t.ne},     {"bytes", t.size},                {"offset", t.offset}};
        std::string md5;
        if (a.md5) {
            spkl::Md5 h;
            h.update(t.bytes.data(), t.bytes.size());
            md5 = h.hex();
            jt["md5"] = md5;
        }
        std::printf("  %-28s %-5s %-16s %12llu bytes%s%s\n", t.name.c_str(), gguf::type_name(t.type).c_str(),
                    shape_str(t.ne).c_str(), static_cast<unsigned long long>(t.size), md5.empty() ? "" : "  md5 ",
                    md5.c_str());
        ts.push_back(std::move(jt));
    }
    j["tensors"] = ts;
    std::string types;
    nlohmann::json jtypes = nlohmann::json::object();
    for (const auto& [name, c] : by_type) {
        types += (types.empty() ? "" : ", ") + name + ": " + std::to_string(c.first) + " tensors " +
                 std::to_string(c.second) + " bytes";
        jtypes[name] = {{"tensors", c.first}, {"bytes", c.second}};
    }
    std::printf("totals       : %zu tensors, %llu parameters, %llu bytes of tensor data (%s)\n", f.tensors.size(),
                static_cast<unsigned long long>(params), static_cast<unsigned long long>(total), types.c_str());
    j["totals"] = {{"tensors", f.tensors.size()}, {"parameters", params}, {"bytes", total}, {"by_type", jtypes}};
    if (out) {
        // Strings from the file that are not UTF-8 (names, metadata) get U+FFFD for the bad bytes.
        const std::string text = j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        out->write(text.data(), text.size());
        out->commit();
    }
    return exit_ok;
}

struct SynthArgs {
    std::string preset, out;
    uint64_t seed = 0;
};

int run_synth(const SynthArgs& a) {
    model::preset(a.preset);  // an unknown preset is bad input before any file is created
    const auto t0 = std::chrono::steady_clock::now();
    model::synth_write(a.preset, a.seed, a.out);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wrote %s (preset %s, seed %llu) in %.1f s\n", a.out.c_str(), a.preset.c_str(),
                static_cast<unsigned long long>(a.seed), s);
    return exit_ok;
}

}  // namespace

void add_model_file_verbs(CLI::App& model, int& rc) {
    auto sy = std::make_shared<SynthArgs>();
    CLI::App* c = model.add_subcommand("synth", "Write a GGUF file of deterministic synthetic qwen2 weights");
    c->add_option("--preset", sy->preset, "tiny | qwen2-0.5b | qwen2-7b")->required();
    c->add_option("--seed", sy->seed, "Seed of the weights")->required();
    c->add_option("--out", sy->out, "Output .gguf")->required();
    c->callback([sy, &rc] { rc = run_synth(*sy); });

    auto in = std::make_shared<InfoArgs>();
    c = model.add_subcommand("info", "Architecture, dimensions, every tensor's type, shape and bytes, totals");
    c->add_option("file", in->file, ".gguf file")->required();
    c->add_option("--json", in->json, "Write the same as JSON to this file");
    c->add_flag("--md5", in->md5, "Print the md5 of each tensor's bytes");
    c->add_flag("--meta", in->meta, "Print every metadata key");
    c->add_flag("--raw", in->raw, "Any GGUF file: check the container only, not the qwen2 model");
    c->callback([in, &rc] { rc = run_info(*in); });
}

}  // namespace bitgate
