// Defective attention variants the engine must catch: kernel mutants held to the prefill or
// decode variant's model and golden lines, and one host mutant whose model drops the split rule.
#include <algorithm>
#include <vector>

#include "attention.hpp"
#include "bitgate/attention_order.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_non_causal", "value_mismatch",
                                           "prefill: every row of a tile sees the keys up to the tile's last "
                                           "position (no causal mask inside the tile)"));
BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_kv_head_mod", "value_mismatch",
                                           "prefill: head h reads kv head h % n_kv_head instead of h / (n_head / "
                                           "n_kv_head)"));
BITGATE_VARIANT("attention", kernel_mutant("prefill", "m_tail_unwritten", "unwritten",
                                           "prefill: the last query's row of out is never written"));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_decode_kv_head_mod", "value_mismatch",
                                           "decode: the group of kv head k is heads k, k + n_kv_head, ... "
                                           "(round-robin) instead of k G .. k G + G-1",
                                           ref::attention_decode_valid));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_skip_last_split", "value_mismatch",
                                           "decode: the combine folds every split but the last",
                                           ref::attention_decode_valid));
BITGATE_VARIANT("attention", kernel_mutant("decode", "m_read_past_L", "value_mismatch",
                                           "decode: the last split reads cache rows up to ctx, past L (the NaN "
                                           "poison comes through)",
                                           ref::attention_decode_valid));

// The model with one split over all keys (plain two-pass softmax): equal to the real order up to
// 128 keys, different bits beyond. The goldens must pin the split rule.
void one_split(const Shape& s, const HostIo& io) {
    const int64_t n_q = s["n_q"], L = s["L"], ctx = s["ctx"], H = s["n_head"], D = s["head_dim"];
    const int64_t G = H / s["n_kv_head"];
    const float* q = io.input<float>(0);
    const uint16_t* kc = io.input<uint16_t>(1);
    const uint16_t* vc = io.input<uint16_t>(2);
    float* out = io.output<float>(0);
    std::vector<float> k(static_cast<size_t>(L * D)), v(static_cast<size_t>(L * D)), acc(static_cast<size_t>(D));
    for (int64_t h = 0; h < H; ++h) {
        for (int64_t i = 0; i < L * D; ++i) {
            k[size_t(i)] = f16_to_f32(kc[(h / G) * ctx * D + i]);
            v[size_t(i)] = f16_to_f32(vc[(h / G) * ctx * D + i]);
        }
        for (int64_t i = 0; i < n_q; ++i) {
            float m = 0.0f, l = 0.0f;
            ref::attention_split(q + (i * H + h) * D, k.data(), v.data(), 0, L - n_q + i + 1, D, attention_scale(D), m,
                                 l, acc.data());
            for (int64_t d = 0; d < D; ++d) out[(i * H + h) * D + d] = acc[size_t(d)] / l;
        }
    }
}

BITGATE_VARIANT("attention", VariantSpec{.name = "m_one_split",
                                         .summary = "host model: one split over all keys (no 128-key splits, no fold)",
                                         .model = one_split,
                                         .mutant = true,
                                         .expect = "golden_mismatch",
                                         .golden_as = "prefill"});

}  // namespace
