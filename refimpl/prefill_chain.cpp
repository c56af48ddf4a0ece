#include "prefill_chain.hpp"

#include <string>

#include "bitgate/pad40.hpp"
#include "mmq_q8_0.hpp"
#include "quantize_pad40_t.hpp"
#include "rms_norm.hpp"

namespace bitgate::ref {

void prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                         int64_t n, int64_t K, int64_t N) {
    rms_norm_quant_f32_t(x, norm_w, work.y, n, K, work.qs, work.sda);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K);
}

void prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                           int64_t n, int64_t K, int64_t N) {
    rms_norm_f32(x, norm_w, work.y, n, K);
    quantize_pad40_t(work.y, n, K, work.qs, work.sda);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K);
}

}  // namespace bitgate::ref
