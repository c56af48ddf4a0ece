#include "weights.hpp"

#include <cstring>
#include <unordered_map>

#include "errors.hpp"

namespace bitgate::model {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::f32: return "F32";
        case DType::f16: return "F16";
        case DType::q8_0: return "Q8_0";
    }
    return "?";
}

uint32_t ggml_type(DType t) {
    switch (t) {
        case DType::f32: return gguf::t_f32;
        case DType::f16: return gguf::t_f16;
        case DType::q8_0: return gguf::t_q8_0;
    }
    return ~0u;
}

uint64_t dtype_bytes(DType t, std::span<const int64_t> ne) {
    return gguf::tensor_bytes(ggml_type(t), ne, dtype_name(t));
}

const Tensor* Model::find(std::string_view name) const {
    for (const Tensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& Model::at(std::string_view name) const {
    if (const Tensor* t = find(name)) return *t;
    throw BadInput("model: missing tensor '" + std::string(name) + "'");
}

Hparams preset(std::string_view name) {
    Hparams h;
    if (name == "tiny") {
        h.n_layer = 2; h.n_embd = 256; h.n_ff = 512; h.n_head = 4; h.n_head_kv = 2;
        h.n_vocab = 1024; h.n_ctx = 512; h.tied = false;
    } else if (name == "qwen2-0.5b") {
        h.n_layer = 24; h.n_embd = 896; h.n_ff = 4864; h.n_head = 14; h.n_head_kv = 2;
        h.n_vocab = 151936; h.n_ctx = 32768; h.tied = true;
    } else if (name == "qwen2-7b") {
        h.n_layer = 28; h.n_embd = 3584; h.n_ff = 18944; h.n_head = 28; h.n_head_kv = 4;
        h.n_vocab = 152064; h.n_ctx = 32768; h.tied = false;
    } else {
        throw BadInput("unknown preset '" + std::string(name) + "' (presets: tiny, qwen2-0.5b, qwen2-7b)");
    }
    return h;
}

std::vector<TensorDesc> qwen2_tensors(const Hparams& hp, DType embd) {
    const int64_t e = hp.n_embd, kv = hp.n_head_kv * hp.head_dim();
    std::vector<TensorDesc> t;
    t.push_back({"token_embd.weight", embd, {e, hp.n_vocab}});
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        t.push_back({b + "attn_norm.weight", DType::f32, {e}});
        t.push_back({b + "attn_q.weight", DType::q8_0, {e, e}});
        t.push_back({b + "attn_q.bias", DType::f32, {e}});
        t.push_back({b + "attn_k.weight", DType::q8_0, {e, kv}});
        t.push_back({b + "attn_k.bias", DType::f32, {kv}});
        t.push_back({b + "attn_v.weight", DType::q8_0, {e, kv}});
        t.push_back({b + "attn_v.bias", DType::f32, {kv}});
        t.push_back({b + "attn_output.weight", DType::q8_0, {e, e}});
        t.push_back({b + "ffn_norm.weight", DType::f32, {e}});
        t.push_back({b + "ffn_gate.weight", DType::q8_0, {e, hp.n_ff}});
        t.push_back({b + "ffn_up.weight", DType::q8_0, {e, hp.n_ff}});
        t.push_back({b + "ffn_down.weight", DType::q8_0, {hp.n_ff, e}});
    }
    t.push_back({"output_norm.weight", DType::f32, {e}});
    if (!hp.tied) t.push_back({"output.weight", DType::q8_0, {e, hp.n_vocab}});
    return t;
}

std::vector<gguf::KV> hparams_meta(const Hparams& hp) {
    using gguf::Value;
    const std::string a = hp.arch;
    auto u = [](int64_t v) { return Value::u32(static_cast<uint32_t>(v)); };
    return {
        {"general.architecture", Value::str_(a)},
        {a + ".block_count", u(hp.n_layer)},
        {a + ".context_length", u(hp.n_ctx)},
        {a + ".embedding_length", u(hp.n_embd)},
        {a + ".feed_forward_length", u(hp.n_ff)},
        {a + ".attention.head_count", u(hp.n_head)},
        {a + ".attention.head_count_kv", u(hp.n_head_kv)},
        {a + ".rope.freq_base", Value::f32(hp.rope_base)},
        {a + ".attention.layer_norm_rms_epsilon", Value::f32(hp.rms_eps)},
    };
}

namespace {

std::string shape_str(std::span<const int64_t> ne) {
    std::string s = "{";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "}";
}

int64_t get_int(const gguf::File& f, const std::string& path, const std::string& key, int64_t lo, int64_t hi,
                const int64_t* fallback = nullptr) {
    const gguf::Value* v = f.find(key);
    if (!v) {
        if (fallback) return *fallback;
        throw BadInput(path + ": missing metadata key '" + key + "'");
    }
    if (!v->is_int()) throw BadInput(path + ": '" + key + "' is " + gguf::vtype_name(v->type) + ", not an integer");
    int64_t out = 0;
    if (!v->int_in(lo, hi, out))
        throw BadInput(path + ": '" + key + "' = " + v->show() + " is out of range (" + std::to_string(lo) + ".." +
                       std::to_string(hi) + ")");
    return out;
}

float get_float(const gguf::File& f, const std::string& path, const std::string& key, const float* fallback) {
    const gguf::Value* v = f.find(key);
    if (!v) {
        if (fallback) return *fallback;
        throw BadInput(path + ": missing metadata key '" + key + "'");
    }
    if (v->type != gguf::VType::f32) throw BadInput(path + ": '" + key + "' is " + gguf::vtype_name(v->type) + ", not float32");
    float x;
    const uint32_t u = static_cast<uint32_t>(v->raw);
    std::memcpy(&x, &u, 4);
    if (!(x > 0.0f) || x > 3.0e38f) throw BadInput(path + ": '" + key + "' = " + v->show() + " is not a positive finite number");
    return x;
}

bool is_hparam_key(const std::string& k) {
    return k == "general.architecture" || k == "general.alignment" || k.rfind("qwen2.", 0) == 0;
}

}  // namespace

Model model_from_gguf(const gguf::File& f, const std::string& path) {
    const gguf::Value* arch = f.find("general.architecture");
    if (!arch) throw BadInput(path + ": missing metadata key 'general.architecture'");
    if (arch->type != gguf::VType::str) throw BadInput(path + ": 'general.architecture' is not a string");
    if (arch->s != "qwen2") throw BadInput(path + ": unsupported architecture '" + arch->s + "' (supported: qwen2)");

    Model m;
    Hparams& h = m.hp;
    constexpr int64_t big = int64_t{1} << 31;
    h.n_layer = get_int(f, path, "qwen2.block_count", 1, 4096);
    h.n_ctx = get_int(f, path, "qwen2.context_length", 1, big);
    h.n_embd = get_int(f, path, "qwen2.embedding_length", 1, 1 << 20);
    h.n_ff = get_int(f, path, "qwen2.feed_forward_length", 1, 1 << 22);
    h.n_head = get_int(f, path, "qwen2.attention.head_count", 1, 1 << 14);
    h.n_head_kv = get_int(f, path, "qwen2.attention.head_count_kv", 1, 1 << 14, &h.n_head);  // llama.cpp's default
    const float rope_default = 10000.0f;  // llama.cpp's default when the key is absent
    h.rope_base = get_float(f, path, "qwen2.rope.freq_base", &rope_default);
    h.rms_eps = get_float(f, path, "qwen2.attention.layer_norm_rms_epsilon", nullptr);
    if (h.n_embd % h.n_head != 0)
        throw BadInput(path + ": embedding_length " + std::to_string(h.n_embd) + " is not a multiple of head_count " +
                       std::to_string(h.n_head));
    if (h.n_head % h.n_head_kv != 0)
        throw BadInput(path + ": head_count " + std::to_string(h.n_head) + " is not a multiple of head_count_kv " +
                       std::to_string(h.n_head_kv));
    if (h.head_dim() % 2 != 0) throw BadInput(path + ": head dimension " + std::to_string(h.head_dim()) + " is odd (rope pairs)");

    const gguf::TensorInfo* embd = f.find_tensor("token_embd.weight");
    if (!embd) throw BadInput(path + ": missing tensor 'token_embd.weight'");
    if (embd->ne.size() != 2)
        throw BadInput(path + ": tensor 'token_embd.weight' has shape " + shape_str(embd->ne) + ", expected {n_embd, n_vocab}");
    h.n_vocab = embd->ne[1];
    if (h.n_vocab < 1 || h.n_vocab > big) throw BadInput(path + ": vocabulary size " + std::to_string(h.n_vocab) + " out of range");
    h.tied = f.find_tensor("output.weight") == nullptr;

    // Every expected tensor, with its shape and a type the forward pass reads.
    std::unordered_map<std::string, const TensorDesc*> want;
    const std::vector<TensorDesc> descs = qwen2_tensors(h);
    for (const TensorDesc& d : descs) {
        want[d.name] = &d;
        const gguf::TensorInfo* t = f.find_tensor(d.name);
        if (!t) throw BadInput(path + ": missing tensor '" + d.name + "'");
        if (t->ne != d.ne)
            throw BadInput(path + ": tensor '" + d.name + "' has shape " + shape_str(t->ne) + ", expected " + shape_str(d.ne));
        const bool matrix = d.type == DType::q8_0;
        const bool is_embd = d.name == "token_embd.weight";
        const bool ok = is_embd ? (t->type == gguf::t_q8_0 || t->type == gguf::t_f16 || t->type == gguf::t_f32)
                        : matrix ? t->type == gguf::t_q8_0
                                 : t->type == gguf::t_f32;
        if (!ok)
            throw BadInput(path + ": tensor '" + d.name + "' has type " + gguf::type_name(t->type) + " (supported: " +
                           (is_embd ? "Q8_0, F16, F32" : matrix ? "Q8_0" : "F32") + ")");
    }
    for (const gguf::TensorInfo& t : f.tensors) {
        auto it = want.find(t.name);
        if (it == want.end()) throw BadInput(path + ": unexpected tensor '" + t.name + "' for qwen2");
        const DType dt = t.type == gguf::t_q8_0 ? DType::q8_0 : t.type == gguf::t_f16 ? DType::f16 : DType::f32;
        m.tensors.push_back({t.name, dt, t.ne, t.bytes});
    }
    for (const gguf::KV& e : f.kv)
        if (!is_hparam_key(e.key)) m.meta.push_back(e);
    return m;
}

Model load_gguf(const std::string& path) {
    auto map = std::make_shared<gguf::Mapping>(path);
    const gguf::File f = gguf::parse(map->bytes(), path);
    Model m = model_from_gguf(f, path);
    m.storage = map;
    m.source = path;
    return m;
}

void write_gguf(const Model& m, const std::string& path) {
    std::vector<gguf::KV> kv = hparams_meta(m.hp);
    for (const gguf::KV& e : m.meta)
        if (!is_hparam_key(e.key)) kv.push_back(e);
    std::vector<gguf::TensorOut> outs;
    for (const Tensor& t : m.tensors) {
        if (t.bytes.size() != dtype_bytes(t.type, t.ne))
            throw std::logic_error("write_gguf: tensor '" + t.name + "' holds " + std::to_string(t.bytes.size()) +
                                   " bytes, its shape needs " + std::to_string(dtype_bytes(t.type, t.ne)));
        outs.push_back({t.name, t.ne, ggml_type(t.type)});
    }
    gguf::write(
        path, kv, outs, [&](size_t i, std::span<uint8_t> out) { std::memcpy(out.data(), m.tensors[i].bytes.data(), out.size()); },
        gguf::default_alignment, m.source.empty() ? std::vector<std::string>{} : std::vector<std::string>{m.source});
}

}  // namespace bitgate::model
