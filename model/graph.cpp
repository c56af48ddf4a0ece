// The step lists of the three paths (docs/forward.md) and their launch prediction.
#include "graph.hpp"

#include <algorithm>
#include <cstdio>

#include "bitgate/attention_order.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/pad40.hpp"
#include "errors.hpp"

namespace bitgate::model {

const char* op_name(Op op) {
    switch (op) {
        case Op::embed: return "embed";
        case Op::rms_norm: return "rms_norm";
        case Op::rms_norm_quant: return "rms_norm_quant";
        case Op::rms_norm_q8_0: return "rms_norm_q8_0";
        case Op::quantize_pad40: return "quantize_pad40";
        case Op::mmq: return "mmq";
        case Op::mmq_add: return "mmq_add";
        case Op::quantize_q8_0: return "quantize_q8_0";
        case Op::proj_q8_0: return "proj_q8_0";
        case Op::proj_q8_0_add: return "proj_q8_0_add";
        case Op::proj_q8_0_pair: return "proj_q8_0_pair";
        case Op::proj_f32: return "proj_f32";
        case Op::bias: return "bias";
        case Op::rope: return "rope";
        case Op::kv_store: return "kv_store";
        case Op::kv_store_f32: return "kv_store_f32";
        case Op::attention: return "attention";
        case Op::attention_f32: return "attention_f32";
        case Op::add: return "add";
        case Op::swiglu: return "swiglu";
        case Op::swiglu_quant: return "swiglu_quant";
        case Op::swiglu_q8_0: return "swiglu_q8_0";
    }
    return "?";
}

const std::vector<PathInfo>& paths() {
    static const std::vector<PathInfo> p = {
        {"baseline",
         "every projection quantizes its own input; unfused rms_norm and swiglu; separate bias and residual add",
         true},
        {"fast",
         "each activation quantized once for every projection that reads it (q/k/v, gate/up); fused "
         "norm+quantize and swiglu+quantize producers in prefill; the bias and the residual add in the "
         "projections' epilogue (proj_q8_0_add in decode, mmq_q8_0_add in prefill); in decode the norms and SwiGLU "
         "write their Q8_0 blocks (rms_norm_q8_0, swiglu_q8_0) and q/k/v are one packed projection, one rope and "
         "one kv_store",
         true},
        {"reference",
         "f32 activations and dequantized weights everywhere (proj_f32), f32 KV cache and attention; "
         "the quality yardstick, host only",
         false},
    };
    return p;
}

const PathInfo& path_info(const std::string& name) {
    for (const PathInfo& p : paths())
        if (p.name == name) return p;
    throw BadInput("unknown path '" + name + "' (baseline, fast, reference)");
}

int Graph::launches() const {
    int s = 0;
    for (const Step& st : steps) s += st.launches;
    return s;
}

bool packs_qkv(const std::string& path, Mode mode) { return path == "fast" && mode == Mode::decode; }

std::vector<WeightPack> weight_packs(const Hparams& hp, const std::string& path) {
    std::vector<WeightPack> packs;
    if (path != "fast") return packs;
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        for (const char* kind : {"weight", "bias"})
            packs.push_back({p + "attn_qkv." + kind, {p + "attn_q." + kind, p + "attn_k." + kind, p + "attn_v." + kind}});
    }
    return packs;
}

int attention_decode_launches(int64_t L) { return (L + kAttnSplit - 1) / kAttnSplit > 1 ? 2 : 1; }

void check_hparams(const Hparams& hp, const std::string& source) {
    auto bad = [&](const std::string& why) { throw BadInput(source + ": " + why); };
    if (hp.arch != "qwen2") bad("architecture '" + hp.arch + "' is not qwen2");
    if (hp.n_layer < 1 || hp.n_embd < 1 || hp.n_ff < 1 || hp.n_head < 1 || hp.n_head_kv < 1 || hp.n_vocab < 1)
        bad("every dimension must be positive");
    if (hp.n_embd % hp.n_head != 0) bad("n_embd is not a multiple of n_head");
    if (hp.n_head % hp.n_head_kv != 0) bad("n_head is not a multiple of n_head_kv");
    const int64_t hd = hp.n_embd / hp.n_head;
    if (hd != 64 && hd != 128) bad("head_dim " + std::to_string(hd) + " (attention takes 64 or 128)");
    if (hp.n_embd % 32 != 0 || hp.n_ff % 32 != 0) bad("n_embd and n_ff must be multiples of 32 (Q8_0 blocks)");
    if (hp.rms_eps != 1e-6f) {
        char eps[32];  // %.9g: every float apart (std::to_string's %f printed 1e-45 as 0.000000)
        std::snprintf(eps, sizeof eps, "%.9g", double(hp.rms_eps));
        bad(std::string("rms eps ") + eps + " (the rms_norm family has 1e-6 only)");
    }
}

namespace {

struct Builder {
    Graph& g;
    void buf(const std::string& name, size_t bytes) {
        size_t& b = g.buffers[name];
        b = std::max(b, bytes);
    }
    Step& add(Op op, std::string family, std::string variant, int layer, std::vector<std::string> in,
              std::vector<std::string> out) {
        Step s;
        s.op = op, s.family = std::move(family), s.variant = std::move(variant), s.layer = layer;
        s.in = std::move(in), s.out = std::move(out);
        g.steps.push_back(std::move(s));
        return g.steps.back();
    }
};

std::string f32w(const std::string& name) { return "f32:" + name; }  // the dequantized copy

}  // namespace

Graph build_graph(const Hparams& hp, const std::string& path, Mode mode, int64_t n, int64_t pos, int64_t ctx) {
    check_hparams(hp, "model");
    path_info(path);
    if (n < 1) throw BadInput("forward: at least one token");
    if (mode == Mode::decode && n != 1) throw BadInput("forward: decode takes one token");
    if (pos < 0 || pos + n > ctx) throw BadInput("forward: positions exceed the cache length");
    Graph g;
    g.hp = hp, g.path = path, g.mode = mode, g.n = n, g.pos = pos, g.ctx = ctx;
    Builder b{g};
    const bool ref = path == "reference", fast = path == "fast", gemm = mode == Mode::prefill;
    const int64_t E = hp.n_embd, F = hp.n_ff, V = hp.n_vocab, hd = E / hp.n_head, KV = hd * hp.n_head_kv;
    const int64_t L = pos + n;
    b.buf("ids", size_t(n) * 4);
    b.buf("pos", size_t(n) * 4);
    for (auto [name, w] : {std::pair<const char*, int64_t>{"x", E}, {"h", E}, {"att", E}, {"o", E}, {"g", F},
                           {"u", F}, {"s", F}, {"d", E}})
        b.buf(name, size_t(n * w) * 4);
    // Packed (fast decode, one token): q, k and v are the parts of one row [q | k | v].
    const bool packed = packs_qkv(path, mode);
    if (packed) {
        b.buf("qkv", size_t(E + 2 * KV) * 4);
        const size_t q0 = 0, k0 = size_t(E) * 4, v0 = size_t(E + KV) * 4;
        g.views = {{"q", {"qkv", q0}}, {"k", {"qkv", k0}}, {"v", {"qkv", v0}}, {"qk", {"qkv", q0}}, {"kv", {"qkv", k0}}};
    } else {
        for (auto [name, w] : {std::pair<const char*, int64_t>{"q", E}, {"k", KV}, {"v", KV}})
            b.buf(name, size_t(n * w) * 4);
    }
    b.buf("logits", size_t(n * V) * 4);
    g.logits = "logits";

    // The quantized form of an activation of width w: the pad40 plane (prefill) or Q8_0 blocks.
    auto qname = [&](int64_t w) { return std::string(gemm ? "plane." : "xq.") + std::to_string(w); };
    auto need_q = [&](int64_t w) {
        if (gemm) {
            b.buf(qname(w) + ".qs", pad40_qs_bytes(n, w));
            b.buf(qname(w) + ".sda", pad40_sda_bytes(n, w));
        } else {
            b.buf(qname(w), size_t(w / QK8_0) * sizeof(BlockQ8_0));
        }
    };
    auto qbufs = [&](int64_t w) {
        return gemm ? std::vector<std::string>{qname(w) + ".qs", qname(w) + ".sda"} : std::vector<std::string>{qname(w)};
    };
    // quantize activation `x` of width w (one launch).
    auto quantize = [&](int layer, const std::string& x, int64_t w) {
        need_q(w);
        Step& s = gemm ? b.add(Op::quantize_pad40, "quantize_pad40_t", "pad40", layer, {x}, qbufs(w))
                       : b.add(Op::quantize_q8_0, "quantize_q8_0", "q8_0", layer, {x}, qbufs(w));
        s.n = n, s.k = w;
    };
    // project the already quantized activation of width k with W [rows][k] into y; with an
    // addend (fast path), y = W x + addend in the projection's epilogue.
    auto project_q = [&](int layer, const std::string& W, int64_t k, int64_t rows, const std::string& y,
                         const std::string& addend) {
        std::vector<std::string> in = qbufs(k);
        in.push_back(W);
        if (!addend.empty()) in.push_back(addend);
        const bool is_bias = addend.find(".bias") != std::string::npos;
        Step& s = gemm ? (addend.empty() ? b.add(Op::mmq, "mmq_q8_0", "mma", layer, in, {y})
                                         : b.add(Op::mmq_add, "mmq_q8_0_add", is_bias ? "bias_fused" : "residual_inplace",
                                                 layer, in, {y}))
                       : addend.empty() ? b.add(Op::proj_q8_0, "proj_q8_0", fast ? "hoisted" : "v2", layer, in, {y})
                                        : b.add(Op::proj_q8_0_add, "proj_q8_0_add", "fused", layer, in, {y});
        s.n = n, s.rows = rows, s.k = k;
    };
    // y = W x for activation x (width k): reference GEMVs, per-call quantize, or the hoisted plane.
    auto project = [&](int layer, const std::string& x, const std::string& W, int64_t k, int64_t rows,
                       const std::string& y, bool quantized_already, const std::string& addend = "") {
        if (ref) {
            Step& s = b.add(Op::proj_f32, "proj_f32", "f32", layer, {x, f32w(W)}, {y});
            s.n = n, s.rows = rows, s.k = k, s.launches = int(n);
            return;
        }
        if (!quantized_already) quantize(layer, x, k);
        project_q(layer, W, k, rows, y, addend);
    };
    auto norm = [&](int layer, const std::string& x, const std::string& w, const std::string& y, bool with_quant) {
        if (with_quant && !gemm) {  // decode: the norm and the Q8_0 blocks of its result in one launch
            need_q(E);
            Step& s = b.add(Op::rms_norm_q8_0, "rms_norm_q8_0", "fused", layer, {x, w}, {y, qname(E)});
            s.n = n, s.k = E;
        } else if (with_quant) {
            need_q(E);
            std::vector<std::string> out = {y};
            for (auto& q : qbufs(E)) out.push_back(q);
            Step& s = b.add(Op::rms_norm_quant, "rms_norm", "rms_norm_quant_f32_t", layer, {x, w}, out);
            s.n = n, s.k = E;
        } else {
            Step& s = b.add(Op::rms_norm, "rms_norm", "rms_norm_f32", layer, {x, w}, {y});
            s.n = n, s.k = E;
        }
    };
    auto bias = [&](int layer, const std::string& y, const std::string& bname, int64_t cols) {
        Step& s = b.add(Op::bias, "bias", "bias_f32", layer, {y, bname}, {y});
        s.n = n, s.rows = n, s.k = cols;
    };
    auto residual = [&](int layer, const std::string& a, const std::string& c) {
        Step& s = b.add(Op::add, "add", "add_f32", layer, {a, c}, {a});
        s.n = n, s.k = E;
    };

    Step& e = b.add(Op::embed, "embed", "table type", -1, {"token_embd.weight"}, {"x"});
    e.n = n, e.k = E;
    // Fused producers: in prefill the norm and SwiGLU write the plane; in decode they write their
    // Q8_0 blocks (rms_norm_q8_0, swiglu_q8_0), while attention's come from quantize_q8_0.
    const bool fused = fast && gemm;
    const bool hoist = fast;  // one quantization of an activation serves every projection reading it
    // The fast path's projections add the bias and the residual in their epilogue: proj_q8_0_add
    // in decode, mmq_q8_0_add in prefill.
    const bool epilogue = fast;
    auto project_bias = [&](int layer, const std::string& W, const std::string& bname, int64_t rows,
                            const std::string& y, bool quantized_already) {
        project(layer, "h", W, E, rows, y, quantized_already, epilogue ? bname : "");
        if (!epilogue) bias(layer, y, bname, rows);
    };
    // y = x + W act: the residual, in the epilogue (straight into x) or as its own add.
    auto project_residual = [&](int layer, const std::string& act, const std::string& W, int64_t k,
                                const std::string& y, bool quantized_already) {
        project(layer, act, W, k, E, epilogue ? "x" : y, quantized_already, epilogue ? "x" : "");
        if (!epilogue) residual(layer, "x", y);
    };
    for (int l = 0; l < hp.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        norm(l, "x", p + "attn_norm.weight", "h", fast);
        const bool have_q = hoist;
        if (packed) {
            // One projection over the q, k and v rows, one rope over the heads of q and k, one
            // kv_store of k and v into the layer's two cache halves: each of those families works
            // row by row or head by head, so the bytes are those of the separate calls.
            project_bias(l, p + "attn_qkv.weight", p + "attn_qkv.bias", E + 2 * KV, "qkv", have_q);
            Step& r = b.add(Op::rope, "rope", "neox", l, {"qk"}, {"qk"});
            r.n = n, r.rows = hp.n_head + hp.n_head_kv, r.k = hd;
            Step& s = b.add(Op::kv_store, "kv_store", "f16", l, {"kv"}, {"cache.kv." + std::to_string(l)});
            s.n = n, s.rows = 2 * hp.n_head_kv, s.k = hd, s.pos0 = pos;
        } else {
            project_bias(l, p + "attn_q.weight", p + "attn_q.bias", E, "q", have_q);
            project_bias(l, p + "attn_k.weight", p + "attn_k.bias", KV, "k", have_q);
            project_bias(l, p + "attn_v.weight", p + "attn_v.bias", KV, "v", have_q);
            for (auto [t, heads] : {std::pair<const char*, int64_t>{"q", hp.n_head}, {"k", hp.n_head_kv}}) {
                Step& s = b.add(Op::rope, "rope", "neox", l, {t}, {t});
                s.n = n, s.rows = heads, s.k = hd;
            }
            for (const char* t : {"k", "v"}) {
                const std::string cache = std::string("cache.") + t + "." + std::to_string(l);
                Step& s = ref ? b.add(Op::kv_store_f32, "kv_store", "f32 copy", l, {t}, {cache})
                              : b.add(Op::kv_store, "kv_store", "f16", l, {t}, {cache});
                s.n = n, s.rows = hp.n_head_kv, s.k = hd, s.pos0 = pos;
            }
        }
        {
            const std::string kc = "cache.k." + std::to_string(l), vc = "cache.v." + std::to_string(l);
            const bool dec = n == 1 && hp.n_head / hp.n_head_kv <= 64;
            Step& s = ref ? b.add(Op::attention_f32, "attention", "f32", l, {"q", kc, vc}, {"att"})
                          : b.add(Op::attention, "attention", dec ? "decode" : "prefill", l, {"q", kc, vc}, {"att"});
            s.n = n, s.rows = hp.n_head, s.h2 = hp.n_head_kv, s.k = hd, s.L = L;
            s.launches = !ref && dec ? attention_decode_launches(L) : 1;
        }
        project_residual(l, "att", p + "attn_output.weight", E, "o", false);
        norm(l, "x", p + "ffn_norm.weight", "h", fast);
        if (fast && !gemm) {  // gate and up read one activation: the pair in one launch (fused2)
            std::vector<std::string> in = qbufs(E);
            in.push_back(p + "ffn_gate.weight");
            in.push_back(p + "ffn_up.weight");
            Step& s = b.add(Op::proj_q8_0_pair, "proj_q8_0", "fused2", l, in, {"g", "u"});
            s.n = n, s.rows = F, s.k = E;
        } else {
            project(l, "h", p + "ffn_gate.weight", E, F, "g", have_q);
            project(l, "h", p + "ffn_up.weight", E, F, "u", have_q);
        }
        if (fused) {
            need_q(F);
            std::vector<std::string> out = {"s"};
            for (auto& q : qbufs(F)) out.push_back(q);
            Step& s = b.add(Op::swiglu_quant, "swiglu", "swiglu_quant_f32_t", l, {"g", "u"}, out);
            s.n = n, s.k = F;
        } else if (fast) {  // decode: SwiGLU and the Q8_0 blocks of its result in one launch
            need_q(F);
            Step& s = b.add(Op::swiglu_q8_0, "swiglu_q8_0", "fused", l, {"g", "u"}, {"s", qname(F)});
            s.n = n, s.k = F;
        } else {
            Step& s = b.add(Op::swiglu, "swiglu", "swiglu_f32", l, {"g", "u"}, {"s"});
            s.n = n, s.k = F;
        }
        project_residual(l, "s", p + "ffn_down.weight", F, "d", fast);
    }
    norm(-1, "x", "output_norm.weight", "h", fast);
    project(-1, "h", hp.tied ? "token_embd.weight" : "output.weight", E, V, "logits", fast);
    return g;
}

std::string LaunchFormula::str() const {
    return std::to_string(layers) + " layers x " + std::to_string(per_layer) + " (" + per_layer_terms + ") + " +
           std::to_string(fixed) + " (" + fixed_terms + ") = " + std::to_string(total());
}

LaunchFormula predict_launches(const Hparams& hp, const std::string& path, Mode mode, int64_t n, int64_t pos) {
    path_info(path);
    LaunchFormula f;
    f.layers = hp.n_layer;
    const int64_t L = pos + n;
    const bool dec = n == 1 && hp.n_head / hp.n_head_kv <= 64;
    const int64_t a = path != "reference" && dec ? attention_decode_launches(L) : 1;
    const std::string as = "attention " + std::to_string(a);
    const std::string mm = mode == Mode::prefill ? "mmq" : "proj";
    if (path == "reference") {
        // One proj_f32 GEMV per token and matrix: 7 matrices per layer.
        f.per_layer = 7 * n + 3 + 2 + 2 + 1 + 2 + 2 + 1;
        f.per_layer_terms = "norm 2 + 7 matrices x " + std::to_string(n) + " tokens + bias 3 + rope 2 + kv copy 2 + " +
                            as + " + add 2 + swiglu 1";
        f.fixed = 1 + 1 + n;
        f.fixed_terms = "embed 1 + norm 1 + lm head " + std::to_string(n);
    } else if (path == "baseline") {
        f.per_layer = 1 + 3 * 3 + 2 + 2 + a + 2 + 1 + 1 + 2 * 2 + 1 + 2 + 1;
        f.per_layer_terms = "norm 1 + q/k/v 3 x (quantize 1 + " + mm + " 1 + bias 1) + rope 2 + kv_store 2 + " + as +
                            " + o (quantize 1 + " + mm + " 1) + add 1 + norm 1 + gate/up 2 x (quantize 1 + " + mm +
                            " 1) + swiglu 1 + down (quantize 1 + " + mm + " 1) + add 1";
        f.fixed = 1 + 1 + 2;
        f.fixed_terms = "embed 1 + norm 1 + lm head (quantize 1 + " + mm + " 1)";
    } else if (mode == Mode::prefill) {  // fast prefill: fused producers, bias and residual in the epilogue
        f.per_layer = 1 + 3 + 2 + 2 + a + 2 + 1 + 2 + 1 + 1;
        f.per_layer_terms = "norm+quantize 1 + q/k/v mmq+bias 3 + rope 2 + kv_store 2 + " + as +
                            " + o (quantize 1 + mmq+add 1) + norm+quantize 1 + gate/up mmq 2 + swiglu+quantize 1 "
                            "+ down mmq+add 1";
        f.fixed = 1 + 1 + 1;
        f.fixed_terms = "embed 1 + norm+quantize 1 + lm head mmq 1";
    } else {  // fast decode: the norms and SwiGLU write their Q8_0 blocks, bias and residual in the
              // projections' epilogue, q/k/v packed (one projection, one rope, one kv_store), gate and up as one pair
        f.per_layer = 1 + 1 + 1 + 1 + a + 2 + 1 + 1 + 1 + 1;
        f.per_layer_terms = "norm+quantize 1 + q/k/v packed proj+bias 1 + rope q,k 1 + kv_store k,v 1 + " + as +
                            " + o (quantize 1 + proj+add 1) + norm+quantize 1 + gate/up proj pair 1 + swiglu+quantize 1 "
                            "+ down proj+add 1";
        f.fixed = 1 + 1 + 1;
        f.fixed_terms = "embed 1 + norm+quantize 1 + lm head proj 1";
    }
    return f;
}

}  // namespace bitgate::model
