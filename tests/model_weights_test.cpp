// qwen2 weights: presets against the published parameter counts, synthetic weights against the
// magnitudes they promise, files written and loaded back, and every way the loader refuses a
// file (architecture, missing tensor, shape, type, every truncation of a small model).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "errors.hpp"
#include "model/weights.hpp"

namespace bitgate::model {
namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("bitgate_model_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

template <class F>
void expect_bad(F&& f, const std::string& path, const std::string& what) {
    try {
        f();
        ADD_FAILURE() << "no BadInput; wanted: " << what;
    } catch (const BadInput& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(path + ": ", 0), 0u) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_NE(m.find(what), std::string::npos) << "message: " << m << "\nwanted: " << what;
    }
}

// A qwen2 model much smaller than "tiny", for loops over every byte of its file.
Hparams small_hp() {
    Hparams h;
    h.n_layer = 1; h.n_embd = 32; h.n_ff = 64; h.n_head = 2; h.n_head_kv = 1; h.n_vocab = 260; h.n_ctx = 64;
    return h;
}

uint64_t params(const Hparams& hp) {
    uint64_t n = 0;
    for (const TensorDesc& d : qwen2_tensors(hp)) {
        uint64_t k = 1;
        for (int64_t x : d.ne) k *= static_cast<uint64_t>(x);
        n += k;
    }
    return n;
}

// The published parameter counts of Qwen2-0.5B (tied) and Qwen2-7B: the presets have their shapes.
TEST(ModelPresets, PublishedParameterCounts) {
    EXPECT_EQ(params(preset("qwen2-0.5b")), 494032768u);
    EXPECT_EQ(params(preset("qwen2-7b")), 7615616512u);
    EXPECT_EQ(qwen2_tensors(preset("qwen2-0.5b")).size(), 1u + 24 * 12 + 1);
    EXPECT_EQ(qwen2_tensors(preset("qwen2-7b")).size(), 1u + 28 * 12 + 2);
    const Hparams t = preset("tiny");
    EXPECT_EQ(t.head_dim(), 64);
    EXPECT_FALSE(t.tied);
    EXPECT_THROW(preset("llama-7b"), BadInput);
}

TEST(ModelPresets, ShapesFollowLlamaCpp) {
    const Hparams h = preset("qwen2-7b");
    const auto ts = qwen2_tensors(h);
    auto shape = [&](const std::string& n) {
        for (const auto& d : ts)
            if (d.name == n) return d.ne;
        return std::vector<int64_t>{};
    };
    EXPECT_EQ(shape("token_embd.weight"), (std::vector<int64_t>{3584, 152064}));
    EXPECT_EQ(shape("blk.27.attn_q.weight"), (std::vector<int64_t>{3584, 3584}));
    EXPECT_EQ(shape("blk.0.attn_k.weight"), (std::vector<int64_t>{3584, 512}));
    EXPECT_EQ(shape("blk.0.attn_v.bias"), (std::vector<int64_t>{512}));
    EXPECT_EQ(shape("blk.0.ffn_gate.weight"), (std::vector<int64_t>{3584, 18944}));
    EXPECT_EQ(shape("blk.0.ffn_down.weight"), (std::vector<int64_t>{18944, 3584}));
    EXPECT_EQ(shape("output.weight"), (std::vector<int64_t>{3584, 152064}));
}

TEST(ModelSynth, DeterministicAndSeeded) {
    const Model a = synth("tiny", 7), b = synth("tiny", 7), c = synth("tiny", 8);
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    size_t differ = 0;
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        ASSERT_EQ(a.tensors[i].bytes.size(), b.tensors[i].bytes.size());
        EXPECT_EQ(0, std::memcmp(a.tensors[i].bytes.data(), b.tensors[i].bytes.data(), a.tensors[i].bytes.size()));
        differ += std::memcmp(a.tensors[i].bytes.data(), c.tensors[i].bytes.data(), a.tensors[i].bytes.size()) != 0;
    }
    EXPECT_EQ(differ, a.tensors.size());
    EXPECT_NE(a.find("output.weight"), nullptr);
    EXPECT_EQ(&a.at("blk.1.ffn_up.weight"), a.find("blk.1.ffn_up.weight"));
    expect_bad([&] { (void)a.at("blk.2.ffn_up.weight"); }, "model", "missing tensor 'blk.2.ffn_up.weight'");
}

// The synthetic quantizer's double quotient is the integer rounding it stands for, on every
// (magnitude, block maximum) a block can have.
TEST(ModelSynth, QuantizedMagnitudeIsTheIntegerRounding) {
    int64_t pairs = 0;
    for (int32_t amax = 1; amax <= 8192; ++amax)
        for (int32_t a = 0; a <= amax; ++a) {
            ASSERT_EQ(quantized_magnitude(a, amax, quantize_divisor(amax)), (2 * 127 * a + amax) / (2 * amax)) << a << " / " << amax;
            ++pairs;
        }
    EXPECT_EQ(pairs, int64_t(8192) * 8195 / 2);
    EXPECT_EQ(quantized_magnitude(0, 0, quantize_divisor(0)), 0);
    EXPECT_EQ(quantized_magnitude(1, 2, quantize_divisor(2)), 64);  // 63.5 rounds away from zero
    EXPECT_EQ(quantized_magnitude(8192, 8192, quantize_divisor(8192)), 127);
}

// What the weights promise: every Q8_0 block quantized like llama.cpp does (largest |q| = 127,
// no -128), scales d in [2^-10, 2^-6) that vary within a row and between rows, q bell-shaped
// (kurtosis near a normal's 3, far from a uniform's 1.8); norms in 1 +- 0.1; biases within 1/16.
TEST(ModelSynth, Magnitudes) {
    const Model m = synth("tiny", 1);
    double n = 0, s1 = 0, s2 = 0, s4 = 0;
    std::set<uint16_t> ds;
    for (const Tensor& t : m.tensors) {
        if (t.type == DType::q8_0) {
            const size_t nb = t.bytes.size() / sizeof(BlockQ8_0);
            const size_t per_row = static_cast<size_t>(t.ne[0]) / QK8_0;
            std::set<uint16_t> row0, col0;
            for (size_t b = 0; b < nb; ++b) {
                BlockQ8_0 blk;
                std::memcpy(&blk, t.bytes.data() + b * sizeof blk, sizeof blk);
                const float d = f16_to_f32(blk.d);
                ASSERT_GE(d, 0x1p-10f) << t.name;
                ASSERT_LT(d, 0x1p-6f) << t.name;
                ds.insert(blk.d);
                if (b < per_row) row0.insert(blk.d);
                if (b % per_row == 0) col0.insert(blk.d);
                int amax = 0;
                for (int8_t q : blk.qs) {
                    ASSERT_NE(q, -128);
                    amax = std::max(amax, std::abs(int{q}));
                    n += 1; s1 += q; s2 += double(q) * q; s4 += double(q) * q * q * q;
                }
                ASSERT_EQ(amax, 127) << t.name << " block " << b;
            }
            EXPECT_GT(row0.size(), per_row / 2) << t.name;  // varies along a row
            EXPECT_GT(col0.size(), 8u) << t.name;           // and between rows
        } else {
            ASSERT_EQ(t.type, DType::f32);
            const bool norm = t.name.find("norm") != std::string::npos;
            for (size_t i = 0; i < t.bytes.size() / 4; ++i) {
                float x;
                std::memcpy(&x, t.bytes.data() + 4 * i, 4);
                if (norm) {
                    ASSERT_GE(x, 0.9f); ASSERT_LE(x, 1.1f);
                } else {
                    ASSERT_LE(std::fabs(x), 0.0625f);
                }
            }
        }
    }
    const double mean = s1 / n, var = s2 / n - mean * mean, kurt = (s4 / n) / (var * var);
    EXPECT_LT(std::fabs(mean), 0.5);
    EXPECT_GT(std::sqrt(var), 35.0);
    EXPECT_LT(std::sqrt(var), 75.0);
    EXPECT_GT(kurt, 2.3);
    EXPECT_LT(kurt, 3.2);
    EXPECT_GT(ds.size(), 2000u);  // scales spread over many f16 values
}

const gguf::Value& meta(const Model& m, const std::string& key) {
    for (const auto& e : m.meta)
        if (e.key == key) return e.value;
    throw std::runtime_error("no key " + key);
}

// GPT-2's byte alphabet, from its published table: 'A' is itself, space is U+0120 'Ġ', newline
// U+010A 'Ċ', byte 0 U+0100 'Ā', 0xAD (soft hyphen, not printable) U+0143 'Ń'.
TEST(ModelSynth, TokenizerIsByteLevelBpe) {
    const Model m = synth("tiny", 1);
    const auto& tokens = meta(m, "tokenizer.ggml.tokens").items;
    const auto& merges = meta(m, "tokenizer.ggml.merges").items;
    const auto& types = meta(m, "tokenizer.ggml.token_type").items;
    ASSERT_EQ(tokens.size(), 1024u);
    ASSERT_EQ(types.size(), 1024u);
    EXPECT_EQ(tokens['A'].s, "A");
    EXPECT_EQ(tokens[' '].s, "\xc4\xa0");
    EXPECT_EQ(tokens['\n'].s, "\xc4\x8a");
    EXPECT_EQ(tokens[0].s, "\xc4\x80");
    EXPECT_EQ(tokens[0xad].s, "\xc5\x83");
    EXPECT_EQ(tokens[1021].s, "<|endoftext|>");
    EXPECT_EQ(types[1021].raw, 3u);
    EXPECT_EQ(meta(m, "tokenizer.ggml.eos_token_id").raw, 1021u);
    EXPECT_EQ(meta(m, "tokenizer.ggml.model").s, "gpt2");
    EXPECT_EQ(meta(m, "tokenizer.ggml.pre").s, "qwen2");
    ASSERT_EQ(merges.size(), 1024u - 256 - 3);
    std::unordered_set<std::string> vocab;
    for (const auto& t : tokens) EXPECT_TRUE(vocab.insert(t.s).second) << "duplicate token " << t.s;
    for (size_t i = 0; i < merges.size(); ++i) {
        const std::string& mg = merges[i].s;
        const size_t sp = mg.find(' ');
        ASSERT_NE(sp, std::string::npos);
        ASSERT_EQ(mg.find(' ', sp + 1), std::string::npos);
        const std::string a = mg.substr(0, sp), b = mg.substr(sp + 1);
        EXPECT_TRUE(vocab.count(a) && vocab.count(b)) << mg;
        EXPECT_EQ(tokens[256 + i].s, a + b);  // merge i makes token 256 + i
    }
}

TEST(ModelFile, WriteLoadRoundTrip) {
    const std::string p = temp_path("tiny.gguf");
    const Model a = synth("tiny", 3);
    write_gguf(a, p);
    const Model b = load_gguf(p);
    EXPECT_EQ(b.hp.n_layer, 2);
    EXPECT_EQ(b.hp.n_embd, 256);
    EXPECT_EQ(b.hp.n_ff, 512);
    EXPECT_EQ(b.hp.n_head, 4);
    EXPECT_EQ(b.hp.n_head_kv, 2);
    EXPECT_EQ(b.hp.n_vocab, 1024);
    EXPECT_EQ(b.hp.n_ctx, 512);
    EXPECT_EQ(b.hp.rope_base, 1000000.0f);
    EXPECT_EQ(b.hp.rms_eps, 1e-6f);
    EXPECT_FALSE(b.hp.tied);
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
        EXPECT_EQ(a.tensors[i].type, b.tensors[i].type);
        EXPECT_EQ(a.tensors[i].ne, b.tensors[i].ne);
        ASSERT_EQ(a.tensors[i].bytes.size(), b.tensors[i].bytes.size());
        EXPECT_EQ(0, std::memcmp(a.tensors[i].bytes.data(), b.tensors[i].bytes.data(), a.tensors[i].bytes.size()));
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b.tensors[i].bytes.data()) % 32, 0u);  // mmap + aligned offsets
    }
    EXPECT_EQ(meta(b, "general.name").s, "bitgate synthetic tiny");
    // Streaming the same preset to a file gives the same bytes as writing the in-memory model.
    const std::string q = temp_path("tiny_stream.gguf");
    synth_write("tiny", 3, q);
    EXPECT_EQ(slurp(p), slurp(q));
    // And a loaded model written again is the same file.
    const std::string r = temp_path("tiny_again.gguf");
    write_gguf(b, r);
    EXPECT_EQ(slurp(p), slurp(r));
    for (const auto& f : {p, q, r}) std::filesystem::remove(f);
}

// A loaded model's bytes are the mapped file: writing it over that file (truncating what is being
// read) is refused, the file untouched; a write that fails leaves no partial model behind.
TEST(ModelFile, WriteNeverOverItsSourceNorHalfDone) {
    const std::string p = temp_path("src.gguf");
    write_gguf(synth("tiny", 4), p);
    const std::vector<uint8_t> before = slurp(p);
    const Model m = load_gguf(p);
    EXPECT_EQ(m.source, p);
    try {
        write_gguf(m, p);
        ADD_FAILURE() << "wrote over its own source";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), p + ": is the input " + p + " itself; write the output to another file");
    }
    EXPECT_EQ(slurp(p), before);
    // A tensor whose fill throws midway: the target keeps its old bytes and no temporary remains.
    const std::string q = temp_path("half.gguf");
    write_gguf(synth("tiny", 5), q);
    const std::vector<uint8_t> old = slurp(q);
    EXPECT_THROW(gguf::write(q, {}, {{"a", {32}, gguf::t_f32}, {"b", {32}, gguf::t_f32}},
                             [](size_t i, std::span<uint8_t>) {
                                 if (i == 1) throw BadInput("fill failed");
                             }),
                 BadInput);
    EXPECT_EQ(slurp(q), old);
    size_t others = 0;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(q).parent_path()))
        others += e.path().filename().string().find("half.gguf.") != std::string::npos;
    EXPECT_EQ(others, 0u);
    for (const auto& f : {p, q}) std::filesystem::remove(f);
}

TEST(ModelFile, TiedAndOtherEmbeddingTypes) {
    Hparams h = small_hp();
    h.tied = true;
    for (DType et : {DType::f16, DType::f32, DType::q8_0}) {
        Model m = synth(h, 5, "small");
        ASSERT_EQ(m.find("output.weight"), nullptr);
        // Re-type the embedding: new bytes kept alive by the test.
        TensorDesc d{"token_embd.weight", et, {h.n_embd, h.n_vocab}};
        std::vector<uint8_t> bytes(dtype_bytes(et, d.ne));
        synth_tensor(d, 5, bytes);
        for (Tensor& t : m.tensors)
            if (t.name == d.name) { t.type = et; t.bytes = bytes; }
        const std::string p = temp_path("embd.gguf");
        write_gguf(m, p);
        const Model b = load_gguf(p);
        EXPECT_TRUE(b.hp.tied);
        EXPECT_EQ(b.at("token_embd.weight").type, et);
        EXPECT_EQ(b.hp.n_vocab, 260);
        std::filesystem::remove(p);
    }
}

// The small model's file image, and a rewrite of it with metadata or tensors changed.
std::vector<uint8_t> small_image(const std::string& p) {
    write_gguf(synth(small_hp(), 9, "small"), p);
    return slurp(p);
}

void rewrite(const std::string& in, const std::string& out, const std::function<void(std::vector<gguf::KV>&)>& kvf,
             const std::function<void(std::vector<gguf::TensorOut>&)>& tf = {}) {
    const std::vector<uint8_t> img = slurp(in);
    const gguf::File f = gguf::parse(img, in);
    std::vector<gguf::KV> kv = f.kv;
    kvf(kv);
    std::vector<gguf::TensorOut> ts;
    for (const auto& t : f.tensors) ts.push_back({t.name, t.ne, t.type});
    if (tf) tf(ts);
    gguf::write(out, kv, ts, [&](size_t i, std::span<uint8_t> o) {
        const auto* src = f.find_tensor(ts[i].name);
        if (!src) return;  // a tensor added by tf: zeros
        std::memcpy(o.data(), src->bytes.data(), std::min(o.size(), src->bytes.size()));
    });
}

TEST(ModelBad, Architecture) {
    const std::string p = temp_path("s.gguf"), q = temp_path("arch.gguf");
    small_image(p);
    rewrite(p, q, [](auto& kv) {
        for (auto& e : kv)
            if (e.key == "general.architecture") e.value = gguf::Value::str_("llama");
    });
    expect_bad([&] { load_gguf(q); }, q, "unsupported architecture 'llama' (supported: qwen2)");
    rewrite(p, q, [](auto& kv) { std::erase_if(kv, [](auto& e) { return e.key == "qwen2.block_count"; }); });
    expect_bad([&] { load_gguf(q); }, q, "missing metadata key 'qwen2.block_count'");
    rewrite(p, q, [](auto& kv) {
        for (auto& e : kv)
            if (e.key == "qwen2.attention.head_count_kv") e.value = gguf::Value::u32(3);
    });
    expect_bad([&] { load_gguf(q); }, q, "head_count 2 is not a multiple of head_count_kv 3");
    rewrite(p, q, [](auto& kv) {
        for (auto& e : kv)
            if (e.key == "qwen2.embedding_length") e.value = gguf::Value::str_("32");
    });
    expect_bad([&] { load_gguf(q); }, q, "'qwen2.embedding_length' is string, not an integer");
    for (const auto& f : {p, q}) std::filesystem::remove(f);
}

TEST(ModelBad, TensorsMissingShapedOrTypedWrong) {
    const std::string p = temp_path("s.gguf"), q = temp_path("t.gguf");
    small_image(p);
    rewrite(p, q, [](auto&) {}, [](auto& ts) { std::erase_if(ts, [](auto& t) { return t.name == "blk.0.ffn_up.weight"; }); });
    expect_bad([&] { load_gguf(q); }, q, "missing tensor 'blk.0.ffn_up.weight'");
    rewrite(p, q, [](auto&) {}, [](auto& ts) {
        for (auto& t : ts)
            if (t.name == "blk.0.attn_k.weight") t.ne = {32, 32};
    });
    expect_bad([&] { load_gguf(q); }, q, "tensor 'blk.0.attn_k.weight' has shape {32, 32}, expected {32, 16}");
    rewrite(p, q, [](auto&) {}, [](auto& ts) {
        for (auto& t : ts)
            if (t.name == "blk.0.attn_q.weight") t.type = gguf::t_q4_0;
    });
    expect_bad([&] { load_gguf(q); }, q, "tensor 'blk.0.attn_q.weight' has type Q4_0 (supported: Q8_0)");
    rewrite(p, q, [](auto&) {}, [](auto& ts) {
        for (auto& t : ts)
            if (t.name == "output_norm.weight") t.type = gguf::t_f16;
    });
    expect_bad([&] { load_gguf(q); }, q, "tensor 'output_norm.weight' has type F16 (supported: F32)");
    rewrite(p, q, [](auto&) {}, [](auto& ts) {
        for (auto& t : ts)
            if (t.name == "token_embd.weight") t.type = gguf::t_bf16;
    });
    expect_bad([&] { load_gguf(q); }, q, "tensor 'token_embd.weight' has type BF16 (supported: Q8_0, F16, F32)");
    rewrite(p, q, [](auto&) {}, [](auto& ts) { ts.push_back({"rope_freqs.weight", {8}, gguf::t_f32}); });
    expect_bad([&] { load_gguf(q); }, q, "unexpected tensor 'rope_freqs.weight'");
    for (const auto& f : {p, q}) std::filesystem::remove(f);
}

// Every prefix of a small model's file is refused with BadInput, never a crash; the whole file
// loads. (Prefixes that drop only the trailing padding of the last tensor are whole files.)
TEST(ModelBad, EveryTruncation) {
    const std::string p = temp_path("s.gguf");
    const std::vector<uint8_t> img = small_image(p);
    const gguf::File full = gguf::parse(img, p);
    uint64_t end = 0;
    for (const auto& t : full.tensors) end = std::max(end, full.data_offset + t.offset + t.size);
    ASSERT_LT(img.size(), 64u * 1024);
    size_t refused = 0;
    for (size_t n = 0; n < img.size(); ++n) {
        try {
            const gguf::File f = gguf::parse(std::span<const uint8_t>(img.data(), n), p);
            model_from_gguf(f, p);
            EXPECT_GE(n, end) << "prefix " << n << " accepted";
        } catch (const BadInput& e) {
            ++refused;
            EXPECT_LT(n, end) << "prefix " << n << ": " << e.what();
            EXPECT_EQ(std::string(e.what()).rfind(p + ": ", 0), 0u);
        }
    }
    EXPECT_EQ(refused, end);
    std::filesystem::remove(p);
}

}  // namespace
}  // namespace bitgate::model
