#include "prefill_chain.cuh"

#include "mmq_q8_0.cuh"
#include "quantize_pad40_t.cuh"
#include "rms_norm.cuh"

namespace bitgate::cuda {

int prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                        int64_t n, int64_t K, int64_t N, cudaStream_t stream) {
    rms_norm_quant_f32_t(x, norm_w, work.y, n, K, work.qs, work.sda, stream);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K, MmqTiling::automatic, stream);
    return 2;
}

int prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                          int64_t n, int64_t K, int64_t N, cudaStream_t stream) {
    rms_norm_f32(x, norm_w, work.y, n, K, stream);
    quantize_pad40_t(work.y, n, K, work.qs, work.sda, stream);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K, MmqTiling::automatic, stream);
    return 3;
}

}  // namespace bitgate::cuda
