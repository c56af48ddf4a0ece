// In-memory presets (qwen2 layout: Q8_0 matrices, f32 norms and biases). GGUF files are not read
// by this build.
#include <cmath>
#include <cstring>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/inputs.hpp"
#include "errors.hpp"
#include "weights.hpp"

namespace bitgate::model {

const Tensor* Model::find(std::string_view name) const {
    for (const Tensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

const Tensor& Model::at(std::string_view name) const {
    if (const Tensor* t = find(name)) return *t;
    throw BadInput("model has no tensor " + std::string(name));
}

namespace {

Hparams preset_hparams(std::string_view p) {
    Hparams h;
    if (p == "tiny") {
        h.n_layer = 2, h.n_embd = 256, h.n_ff = 512, h.n_head = 4, h.n_head_kv = 2, h.n_vocab = 1024, h.n_ctx = 512;
    } else if (p == "qwen2-0.5b") {
        h.n_layer = 24, h.n_embd = 896, h.n_ff = 4864, h.n_head = 14, h.n_head_kv = 2, h.n_vocab = 151936;
        h.n_ctx = 32768, h.tied = true;
    } else if (p == "qwen2-7b") {
        h.n_layer = 28, h.n_embd = 3584, h.n_ff = 18944, h.n_head = 28, h.n_head_kv = 4, h.n_vocab = 152064;
        h.n_ctx = 32768;
    } else {
        throw BadInput("unknown preset '" + std::string(p) + "' (tiny, qwen2-0.5b, qwen2-7b)");
    }
    return h;
}

struct Arena {
    std::vector<std::vector<uint8_t>> blobs;
};

// A keyed stream of 64-bit values per tensor name.
struct Bits {
    uint64_t key;
    uint64_t bits(uint64_t i) const { return inputs::mix64(key ^ inputs::mix64(i)); }
    float uniform(uint64_t i) const {  // [-1, 1), 24 bits times an exact power of two
        return float(int32_t(bits(i) >> 40) - (1 << 23)) * 0x1p-23f;
    }
};

}  // namespace

Model synth(std::string_view preset, uint64_t seed) {
    Model m;
    m.hp = preset_hparams(preset);
    auto arena = std::make_shared<Arena>();
    const Hparams& h = m.hp;
    const int64_t hd = h.n_embd / h.n_head, kv = hd * h.n_head_kv;
    // Q8_0 matrix [rows][k]: q uniform in [-127, 127], d = sqrt(3/k)/127, so entries have
    // variance about 1/k and a projection keeps the activation's scale.
    auto q8 = [&](const std::string& name, int64_t k, int64_t rows, double amp) {
        const Bits s{inputs::mix64(seed ^ inputs::name_hash(name))};
        std::vector<uint8_t> b(size_t(rows * (k / QK8_0)) * sizeof(BlockQ8_0));
        auto* blk = reinterpret_cast<BlockQ8_0*>(b.data());
        const uint16_t d = f32_to_f16_rn(float(amp / 127.0));
        for (int64_t i = 0; i < rows * (k / QK8_0); ++i) {
            blk[i].d = d;
            for (int j = 0; j < QK8_0; ++j) blk[i].qs[j] = int8_t(int(s.bits(uint64_t(i) * 32 + j) % 255) - 127);
        }
        arena->blobs.push_back(std::move(b));
        m.tensors.push_back({name, DType::q8_0, {k, rows}, arena->blobs.back()});
    };
    auto f32 = [&](const std::string& name, int64_t n, float centre, float spread) {
        const Bits s{inputs::mix64(seed ^ inputs::name_hash(name))};
        std::vector<uint8_t> b(size_t(n) * 4);
        for (int64_t i = 0; i < n; ++i) {
            const float v = centre + spread * s.uniform(uint64_t(i));
            std::memcpy(b.data() + i * 4, &v, 4);
        }
        arena->blobs.push_back(std::move(b));
        m.tensors.push_back({name, DType::f32, {n}, arena->blobs.back()});
    };
    const double a_e = std::sqrt(3.0 / double(h.n_embd)), a_f = std::sqrt(3.0 / double(h.n_ff));
    q8("token_embd.weight", h.n_embd, h.n_vocab, 1.0);
    for (int64_t l = 0; l < h.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        f32(p + "attn_norm.weight", h.n_embd, 1.0f, 0.25f);
        q8(p + "attn_q.weight", h.n_embd, h.n_embd, a_e);
        f32(p + "attn_q.bias", h.n_embd, 0.0f, 0.1f);
        q8(p + "attn_k.weight", h.n_embd, kv, a_e);
        f32(p + "attn_k.bias", kv, 0.0f, 0.1f);
        q8(p + "attn_v.weight", h.n_embd, kv, a_e);
        f32(p + "attn_v.bias", kv, 0.0f, 0.1f);
        q8(p + "attn_output.weight", h.n_embd, h.n_embd, a_e);
        f32(p + "ffn_norm.weight", h.n_embd, 1.0f, 0.25f);
        q8(p + "ffn_gate.weight", h.n_embd, h.n_ff, a_e);
        q8(p + "ffn_up.weight", h.n_embd, h.n_ff, a_e);
        q8(p + "ffn_down.weight", h.n_ff, h.n_embd, a_f);
    }
    f32("output_norm.weight", h.n_embd, 1.0f, 0.25f);
    if (!h.tied) q8("output.weight", h.n_embd, h.n_vocab, 4.0 * a_e);
    m.storage = arena;
    return m;
}

Model load_gguf(const std::string& path) { throw BadInput(path + ": GGUF files are not supported by this build"); }
void write_gguf(const Model&, const std::string& path) {
    throw BadInput(path + ": GGUF files are not supported by this build");
}

}  // namespace bitgate::model
