// Synthetic qwen2 weights: every byte a pure function of (seed, tensor name, index) through the
// integer hashing of bitgate/inputs.hpp, exact IEEE operations only (no libm), so a preset and a
// seed give the same file on every machine. Magnitudes follow a trained model's: norm weights
// near 1, small biases, Q8_0 blocks quantized the way llama.cpp quantizes (the largest |q| of a
// block is 127, d = amax / 127 between about 1e-3 and 1.6e-2, varying by row and by block).
#include <algorithm>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/inputs.hpp"
#include "errors.hpp"
#include "fma_clones.hpp"
#include "weights.hpp"

namespace bitgate::model {
namespace {

using inputs::Stream;

Stream stream(const TensorDesc& t, uint64_t seed) {
    const GenRequest r{seed, "synth", t.name};
    return Stream(r, "model");
}

bool ends_with(std::string_view s, std::string_view tail) {
    return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// One Q8_0 row of `nb` blocks. Values before quantization are Irwin-Hall sums of four 12-bit
// uniforms (bell-shaped, integer), then scaled so the block's largest magnitude is 127, rounding
// half away from zero, as llama.cpp's quantize_row_q8_0 does with its roundf.
BITGATE_SIMD_CLONES void q8_row(const Stream& s, uint64_t row, uint64_t nb, BlockQ8_0* out) {
    const uint64_t hr = s.bits(row, 3);
    const uint32_t row_exp = 5 + static_cast<uint32_t>(hr % 3);  // f16 exponent 5..7: 2^-10 .. 2^-8
    for (uint64_t k = 0; k < nb; ++k) {
        const uint64_t b = row * nb + k;
        const uint64_t hb = s.bits(b, 1);
        BlockQ8_0 blk;
        blk.d = static_cast<uint16_t>(((row_exp + hb % 2) << 10) | ((hb >> 8) & 0x3ffu));
        // Loops of a fixed 32 without branches: the compiler vectorizes them (hashes included).
        int32_t v[QK8_0], mag[QK8_0];
        for (int j = 0; j < QK8_0; ++j) {
            const uint64_t h = s.bits(b * QK8_0 + uint64_t(j));
            int32_t sum = 0;
            for (int f = 0; f < 4; ++f) sum += static_cast<int32_t>((h >> (12 * f)) & 0xfffu) - 2048;
            v[j] = sum;
            mag[j] = sum < 0 ? -sum : sum;
        }
        int32_t amax = 0;
        for (int j = 0; j < QK8_0; ++j) amax = std::max(amax, mag[j]);
        const double divisor = quantize_divisor(amax);
        int32_t q[QK8_0];
        for (int j = 0; j < QK8_0; ++j) {
            const int32_t m = quantized_magnitude(mag[j], amax, divisor);
            q[j] = v[j] < 0 ? -m : m;
        }
        for (int j = 0; j < QK8_0; ++j) blk.qs[j] = static_cast<int8_t>(q[j]);
        std::memcpy(out + k, &blk, sizeof blk);
    }
}

// Row-parallel: rows are independent, so any split gives the same bytes.
template <class F>
void parallel_rows(uint64_t rows, F&& f) {
    const uint64_t work_threshold = 64;
    unsigned n = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    if (rows < work_threshold) n = 1;
    if (n == 1) {
        f(uint64_t{0}, rows);
        return;
    }
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < n; ++i)
        ts.emplace_back([&, i] { f(rows * i / n, rows * (i + 1) / n); });
    for (auto& t : ts) t.join();
}

}  // namespace

void synth_tensor(const TensorDesc& t, uint64_t seed, std::span<uint8_t> out) {
    if (out.size() != dtype_bytes(t.type, t.ne)) throw std::logic_error("synth_tensor: wrong buffer size for " + t.name);
    const Stream s = stream(t, seed);
    const uint64_t row_len = static_cast<uint64_t>(t.ne[0]);
    const uint64_t rows = row_len ? out.size() / (t.type == DType::q8_0 ? row_len / QK8_0 * sizeof(BlockQ8_0)
                                                  : row_len * (t.type == DType::f16 ? 2 : 4))
                                  : 0;
    if (t.type == DType::q8_0) {
        const uint64_t nb = row_len / QK8_0;
        auto* blocks = reinterpret_cast<BlockQ8_0*>(out.data());
        parallel_rows(rows, [&](uint64_t r0, uint64_t r1) {
            for (uint64_t r = r0; r < r1; ++r) q8_row(s, r, nb, blocks + r * nb);
        });
        return;
    }
    // f32/f16: norms 1 +- 0.1, biases +- 1/16, anything else (an f16/f32 embedding) +- 1/32.
    const bool norm = ends_with(t.name, "norm.weight");
    const bool bias = ends_with(t.name, ".bias");
    const uint64_t n = rows * row_len;
    parallel_rows(rows, [&](uint64_t r0, uint64_t r1) {
        for (uint64_t i = r0 * row_len; i < r1 * row_len; ++i) {
            const float u = s.uniform(i);
            const float x = norm ? 1.0f + 0.1f * u : bias ? u * 0x1p-4f : u * 0x1p-5f;
            if (t.type == DType::f32) {
                std::memcpy(out.data() + 4 * i, &x, 4);
            } else {
                const uint16_t h = f32_to_f16_rn(x);
                std::memcpy(out.data() + 2 * i, &h, 2);
            }
        }
    });
    (void)n;
}

// ---- tokenizer ----------------------------------------------------------------------------------

namespace {

// GPT-2's byte-level alphabet: printable bytes stand for themselves, the others are moved to
// code points 256 and up, in byte order.
std::string byte_char(uint8_t b) {
    auto printable = [](int c) { return (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255); };
    uint32_t cp = b;
    if (!printable(b)) {
        uint32_t n = 0;
        for (int c = 0; c < b; ++c) n += printable(c) ? 0 : 1;
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else {  // all code points here are below 0x800: two UTF-8 bytes
        s += static_cast<char>(0xc0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return s;
}

std::string encode(const std::string& raw) {
    std::string s;
    for (unsigned char c : raw) s += byte_char(c);
    return s;
}

}  // namespace

std::vector<gguf::KV> synth_meta(std::string_view preset_name, const Hparams& hp) {
    using gguf::Value;
    using gguf::VType;
    const std::vector<std::string> specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
    const int64_t n_special = static_cast<int64_t>(specials.size());
    if (hp.n_vocab < 256 + n_special) throw BadInput("synth: vocabulary " + std::to_string(hp.n_vocab) + " is below 259");

    // Raw-byte tokens, then merges of two earlier tokens (each merged token new, at most 16 bytes).
    std::vector<std::string> raw;
    raw.reserve(hp.n_vocab);
    for (int b = 0; b < 256; ++b) raw.emplace_back(1, static_cast<char>(b));
    std::unordered_set<std::string> seen(raw.begin(), raw.end());
    std::vector<Value> merges;
    const int64_t n_merge = hp.n_vocab - 256 - n_special;
    merges.reserve(n_merge);
    const uint64_t key = inputs::mix64(inputs::name_hash("tokenizer.ggml.merges"));
    for (uint64_t k = 0; static_cast<int64_t>(merges.size()) < n_merge; ++k) {
        const uint64_t h = inputs::mix64(key ^ inputs::mix64(k));
        const size_t n = raw.size();
        const std::string& a = raw[(h & 0xffffffffu) % n];
        const std::string& b = raw[(h >> 32) % n];
        if (a.size() + b.size() > 16) continue;
        std::string ab = a + b;
        if (!seen.insert(ab).second) continue;
        merges.push_back(Value::str_(encode(a) + " " + encode(b)));
        raw.push_back(std::move(ab));
    }
    std::vector<Value> tokens, types;
    tokens.reserve(hp.n_vocab);
    types.reserve(hp.n_vocab);
    for (const std::string& r : raw) {
        tokens.push_back(Value::str_(encode(r)));
        types.push_back(Value::i32(1));  // normal
    }
    for (const std::string& s : specials) {
        tokens.push_back(Value::str_(s));
        types.push_back(Value::i32(3));  // control
    }
    const uint32_t eot = static_cast<uint32_t>(hp.n_vocab - n_special);
    return {
        {"general.name", Value::str_("bitgate synthetic " + std::string(preset_name))},
        {"general.file_type", Value::u32(7)},  // llama.cpp's "mostly Q8_0"
        {"tokenizer.ggml.model", Value::str_("gpt2")},
        {"tokenizer.ggml.pre", Value::str_("qwen2")},
        {"tokenizer.ggml.tokens", Value::array(VType::str, std::move(tokens))},
        {"tokenizer.ggml.token_type", Value::array(VType::i32, std::move(types))},
        {"tokenizer.ggml.merges", Value::array(VType::str, std::move(merges))},
        {"tokenizer.ggml.bos_token_id", Value::u32(eot)},
        {"tokenizer.ggml.eos_token_id", Value::u32(eot)},
        {"tokenizer.ggml.padding_token_id", Value::u32(eot)},
        {"tokenizer.ggml.add_bos_token", Value::boolean(false)},
    };
}

Model synth(std::string_view preset_name, uint64_t seed) { return synth(preset(preset_name), seed, preset_name); }

Model synth(const Hparams& hp, uint64_t seed, std::string_view preset_name) {
    Model m;
    m.hp = hp;
    const std::vector<TensorDesc> descs = qwen2_tensors(m.hp);
    // One allocation; every tensor starts on a 256-byte boundary inside it.
    std::vector<uint64_t> offs;
    uint64_t total = 0;
    for (const TensorDesc& d : descs) {
        offs.push_back(total);
        const uint64_t n = dtype_bytes(d.type, d.ne);
        total += (n + 255) / 256 * 256;
    }
    std::shared_ptr<uint8_t[]> buf(new uint8_t[total]);
    for (size_t i = 0; i < descs.size(); ++i) {
        const std::span<uint8_t> out(buf.get() + offs[i], dtype_bytes(descs[i].type, descs[i].ne));
        synth_tensor(descs[i], seed, out);
        m.tensors.push_back({descs[i].name, descs[i].type, descs[i].ne, out});
    }
    m.storage = buf;
    m.meta = synth_meta(preset_name, m.hp);
    return m;
}

void synth_write(std::string_view preset_name, uint64_t seed, const std::string& path) {
    const Hparams hp = preset(preset_name);
    const std::vector<TensorDesc> descs = qwen2_tensors(hp);
    std::vector<gguf::KV> kv = hparams_meta(hp);
    for (gguf::KV& e : synth_meta(preset_name, hp)) kv.push_back(std::move(e));
    std::vector<gguf::TensorOut> outs;
    for (const TensorDesc& d : descs) outs.push_back({d.name, d.ne, ggml_type(d.type)});
    gguf::write(path, kv, outs, [&](size_t i, std::span<uint8_t> out) { synth_tensor(descs[i], seed, out); });
}

}  // namespace bitgate::model
