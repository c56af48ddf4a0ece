#include "rms_norm.cuh"

#include "bitgate/pad40.hpp"
#include "quantize_pad40_t.cuh"
#include "rms_norm_kernels.cuh"

namespace bitgate::cuda {

namespace {

using rms::rms_norm_f32_kernel;
using rms::rms_norm_quant_f32_t_kernel;

template <int P>
void launch_quant(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda,
                  cudaStream_t stream) {
    const unsigned blocks = unsigned(pad40_tokens(n) / (kRmsQuantWarps / P));
    rms_norm_quant_f32_t_kernel<P><<<blocks, kRmsQuantWarps * 32, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(w), reinterpret_cast<float4*>(y), n,
        d, qs, sda);
}

template <int P>
void launch_f32(const float* x, const float* w, float* y, int64_t n, int64_t d, cudaStream_t stream) {
    constexpr int rows = kRmsRowsPerBlock / P;
    const unsigned blocks = unsigned((n + rows - 1) / rows);
    launch_dependent(rms_norm_f32_kernel<P>, dim3(blocks), dim3(kRmsThreads), 0, stream,
                     reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(w),
                     reinterpret_cast<float4*>(y), n, d);
}

}  // namespace

void rms_norm_f32(const float* x, const float* w, float* y, int64_t n, int64_t d, cudaStream_t stream) {
    static_assert(rms_f32_parts(64) == kRmsRowsPerBlock && rms_f32_parts(65) == 1, "the launcher's two shapes");
    if (rms_f32_parts(n) == kRmsRowsPerBlock) return launch_f32<kRmsRowsPerBlock>(x, w, y, n, d, stream);
    launch_f32<1>(x, w, y, n, d, stream);
}

void rms_norm_quant_f32_t(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs,
                          uint32_t* sda, cudaStream_t stream) {
    if (rms_quant_parts(n) == 4) return launch_quant<4>(x, w, y, n, d, qs, sda, stream);
    launch_quant<1>(x, w, y, n, d, qs, sda, stream);
}

}  // namespace bitgate::cuda
