// Defective attention variants the engine must catch: kernel mutants held to the prefill or
// decode variant's model and golden lines, and one host mutant whose model drops the split rule.
#include <algorithm>
#include <string>
#include <vector>

#include "attention.cuh"
#include "attention.hpp"
#include "bitgate/attention_order.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;
using cuda::mutants::AttentionDefect;

std::string decode_valid(const Shape& s) { return ref::attention_decode_problem(s["n_q"], s["n_head"], s["n_kv_head"]); }

DeviceLauncher prefill([[maybe_unused]] AttentionDefect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        return cuda::mutants::attention_prefill_defective(
            defect, io.input<float>("q"), io.input<uint16_t>("k_cache"), io.input<uint16_t>("v_cache"), s["n_q"],
            s["L"], s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>("out"),
            static_cast<cudaStream_t>(io.stream));
    });
}

DeviceLauncher decode([[maybe_unused]] AttentionDefect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        return cuda::mutants::attention_decode_defective(
            defect, io.input<float>("q"), io.input<uint16_t>("k_cache"), io.input<uint16_t>("v_cache"), s["L"],
            s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>("out"), io.workspace<float>("part"),
            static_cast<cudaStream_t>(io.stream));
    });
}

BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_non_causal", "value_mismatch",
                                           "prefill: every row of a tile sees the keys up to the tile's last "
                                           "position (no causal mask inside the tile)",
                                           prefill(AttentionDefect::non_causal)));
BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_kv_head_mod", "value_mismatch",
                                           "prefill: head h reads kv head h % n_kv_head instead of h / (n_head / "
                                           "n_kv_head)",
                                           prefill(AttentionDefect::kv_head_mod)));
BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_tail_unwritten", "unwritten",
                                           "prefill: the last query's row of out is never written",
                                           prefill(AttentionDefect::tail_unwritten)));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_decode_kv_head_mod", "value_mismatch",
                                           "decode: the group of kv head k is heads k, k + n_kv_head, ... "
                                           "(round-robin) instead of k G .. k G + G-1",
                                           decode(AttentionDefect::kv_head_mod), decode_valid));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_skip_last_split", "value_mismatch",
                                           "decode: the combine folds every split but the last",
                                           decode(AttentionDefect::skip_last_split), decode_valid));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_read_past_L", "value_mismatch",
                                           "decode: the last split reads cache rows up to ctx, past L (the NaN "
                                           "poison comes through)",
                                           decode(AttentionDefect::read_past_L), decode_valid));

// The host mutants' frame: each head's cache rows widened to f32, then `row(q, k, v, n_keys, D,
// out)` for each query row of the head (n_keys: the keys the row sees).
template <typename Row>
void each_row(const Shape& s, const HostIo& io, Row row) {
    const int64_t n_q = s["n_q"], L = s["L"], ctx = s["ctx"], H = s["n_head"], D = s["head_dim"];
    const int64_t G = H / s["n_kv_head"];
    const float* q = io.input<float>("q");
    const uint16_t* kc = io.input<uint16_t>("k_cache");
    const uint16_t* vc = io.input<uint16_t>("v_cache");
    float* out = io.output<float>("out");
    std::vector<float> k(static_cast<size_t>(L * D)), v(static_cast<size_t>(L * D));
    for (int64_t h = 0; h < H; ++h) {
        for (int64_t i = 0; i < L * D; ++i) {
            k[size_t(i)] = f16_to_f32(kc[(h / G) * ctx * D + i]);
            v[size_t(i)] = f16_to_f32(vc[(h / G) * ctx * D + i]);
        }
        for (int64_t i = 0; i < n_q; ++i)
            row(q + (i * H + h) * D, k.data(), v.data(), L - n_q + i + 1, D, out + (i * H + h) * D);
    }
}

// The model with one split over all keys (plain two-pass softmax): equal to the real order up to
// 128 keys, different bits beyond. The goldens must pin the split rule.
void one_split(const Shape& s, const HostIo& io) {
    std::vector<float> acc(static_cast<size_t>(s["head_dim"]));
    each_row(s, io, [&](const float* q, const float* k, const float* v, int64_t n_keys, int64_t D, float* out) {
        float m = 0.0f, l = 0.0f;
        ref::attention_split(q, k, v, 0, n_keys, D, attention_scale(D), m, l, acc.data());
        for (int64_t d = 0; d < D; ++d) out[d] = acc[size_t(d)] / l;
    });
}

BITGATE_VARIANT("attention", VariantSpec{.name = "m_one_split",
                                         .summary = "host model: one split over all keys (no 128-key splits, no fold)",
                                         .model = one_split,
                                         .mutant = true,
                                         .expect = "golden_mismatch",
                                         .golden_as = "prefill"});

// The model with the splits folded in one level (position order, no groups): equal to the real
// order up to one group of splits (4,096 keys), different bits beyond. The goldens must pin the
// group rule.
void one_level_fold(const Shape& s, const HostIo& io) {
    std::vector<float> acc(static_cast<size_t>(s["head_dim"])), A(acc.size());
    each_row(s, io, [&](const float* q, const float* k, const float* v, int64_t n_keys, int64_t D, float* out) {
        float M = 0.0f, Ls = 0.0f;
        for (int64_t c = 0; c < attn_splits(n_keys); ++c) {
            float m = 0.0f, l = 0.0f;
            ref::attention_split(q, k, v, c * kAttnSplit, std::min(n_keys, (c + 1) * kAttnSplit), D,
                                 attention_scale(D), m, l, acc.data());
            if (c == 0)
                M = m, Ls = l, A = acc;
            else
                ref::attention_fold(M, Ls, A.data(), m, l, acc.data(), D);
        }
        for (int64_t d = 0; d < D; ++d) out[d] = A[size_t(d)] / Ls;
    });
}

BITGATE_VARIANT("attention", VariantSpec{.name = "m_one_level_fold",
                                         .summary = "host model: the splits folded in one level (no groups of 32)",
                                         .model = one_level_fold,
                                         .mutant = true,
                                         .expect = "golden_mismatch",
                                         .golden_as = "prefill"});

}  // namespace
