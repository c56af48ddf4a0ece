// The qwen2 forward pass as one list of steps, shared by the host runner, the device runner and
// the launch prediction. A step is one family call (family + variant) on named tensors: model
// weights by their ggml names, activations, quantized planes and the KV caches by fixed names.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weights.hpp"

namespace bitgate::model {

enum class Op {
    embed,           // in: table;              out: x        (ids from "ids")
    rms_norm,        // in: x, weight;          out: y
    rms_norm_quant,  // in: x, weight;          out: y, qs, sda
    rms_norm_q8_0,   // in: x, weight;          out: y, xq        (decode: the norm and its Q8_0 blocks)
    quantize_pad40,  // in: x;                  out: qs, sda
    mmq,             // in: qs, sda, W;         out: y [n][rows]
    mmq_add,         // in: qs, sda, W, a;      out: y = W x + a   (a: a bias [rows] or a residual [n][rows], y may be a)
    quantize_q8_0,   // in: x;                  out: xq
    proj_q8_0,       // in: xq, W;              out: y [rows]      (v2 order; one token)
    proj_q8_0_add,   // in: xq, W, a;           out: y = W xq + a  (the add epilogue; y may be a)
    proj_q8_0_pair,  // in: xq, W0, W1;         out: y0, y1 [rows each] (two projections, one launch)
    proj_f32,        // in: x, W (dequantized); out: y [n][rows]  (one GEMV per token)
    bias,            // in: y, b;               out: y
    rope,            // in: x;                  out: x            (positions from "pos")
    kv_store,        // in: kv;                 out: cache        (f16, at positions pos0 ..)
    kv_store_f32,    // in: kv;                 out: cache        (f32 copy, reference only)
    attention,       // in: q, k cache, v cache; out: att         (f16 caches)
    attention_f32,   // in: q, k cache, v cache; out: att         (f32 caches, reference only)
    add,             // in: a, b;               out: y
    swiglu,          // in: g, u;               out: s
    swiglu_quant,    // in: g, u;               out: s, qs, sda
    swiglu_q8_0,     // in: g, u;               out: s, xq        (decode: SwiGLU and its Q8_0 blocks)
};
const char* op_name(Op op);

struct Step {
    Op op;
    std::string family, variant;
    int layer = -1;                 // -1: outside the layers
    std::vector<std::string> in, out;
    // Dims, as the op reads them: n tokens; rows (output rows, heads, or columns); k (row
    // length, head_dim); h2 (kv heads); pos0 and L for caches and attention.
    int64_t n = 0, rows = 0, k = 0, h2 = 0, pos0 = 0, L = 0;
    int launches = 1;               // what the family's launcher enqueues for these dims
};

enum class Mode { prefill, decode };

struct PathInfo {
    std::string name, summary;
    bool device = true;  // runs on the device too
};
const std::vector<PathInfo>& paths();
const PathInfo& path_info(const std::string& name);  // BadInput for an unknown path

// One forward call. Prefill: tokens 0 .. n-1 at positions 0 .. n-1, logits [n][vocab].
// Decode: one token at position pos (the cache holds 0 .. pos-1), logits [1][vocab].
struct Graph {
    Hparams hp;
    std::string path;
    Mode mode = Mode::prefill;
    int64_t n = 0, pos = 0, ctx = 0;
    std::vector<Step> steps;
    std::map<std::string, size_t> buffers;  // activation name -> bytes (caches excluded)
    // Activation names that are byte ranges of a buffer above (fast decode: q, k and v are the
    // parts of the one row the packed q/k/v projection writes; "qk" and "kv" the pairs that rope
    // and kv_store take in one launch). A runner resolves a view to its base plus the offset.
    struct View {
        std::string base;
        size_t offset = 0;
    };
    std::map<std::string, View> views;
    std::string logits;                      // the buffer holding [n][n_vocab] f32
    int launches() const;
};

// Weight tensors a runner stores back to back under a name of their own, the parts keeping their
// names as pointers into it. The fast path packs each layer's attn_q/k/v weights
// (blk.N.attn_qkv.weight, E + 2 KV rows) and biases (blk.N.attn_qkv.bias), so that decode projects
// q, k and v in one launch over their rows: a row's bytes do not depend on the rows around it
// (proj_q8_0's order is per row and set by the row length alone). Every part is a multiple of 256
// bytes (rows a multiple of 64, head_dim 64 or 128), so each keeps the alignment an allocation of
// its own would have. Empty for the other paths.
struct WeightPack {
    std::string name;
    std::vector<std::string> parts;
};
std::vector<WeightPack> weight_packs(const Hparams& hp, const std::string& path);
// Whether this call's graph projects q/k/v packed (fast decode).
bool packs_qkv(const std::string& path, Mode mode);

// Checks that the architecture is one the families run (BadInput "SOURCE: what is not", SOURCE
// the file or preset the model came from, so that a valid qwen2 file the forward cannot run is
// refused in one line naming it).
void check_hparams(const Hparams& hp, const std::string& source);
// ctx: the cache length (positions); caches are named cache.k.L / cache.v.L (f16, or f32 in the
// reference path), [n_head_kv][ctx][head_dim]. The f16 caches of a layer are the two halves of
// cache.kv.L ([2 n_head_kv][ctx][head_dim], k first), which fast decode's one kv_store writes.
Graph build_graph(const Hparams& hp, const std::string& path, Mode mode, int64_t n, int64_t pos, int64_t ctx);

// The launch count as a formula over the architecture: layers x per_layer + fixed, each part
// with its factors in words.
struct LaunchFormula {
    int64_t layers = 0, per_layer = 0, fixed = 0;
    std::string per_layer_terms, fixed_terms;
    int64_t total() const { return layers * per_layer + fixed; }
    std::string str() const;
};
// Derived from the family semantics, independently of build_graph (a test holds them equal).
LaunchFormula predict_launches(const Hparams& hp, const std::string& path, Mode mode, int64_t n, int64_t pos);

// Decode attention launches for L cached positions: the split kernel, plus a fold when the keys
// span more than one split of 128.
int attention_decode_launches(int64_t L);

}  // namespace bitgate::model
