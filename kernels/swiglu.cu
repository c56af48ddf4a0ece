#include "swiglu.cuh"

#include "bitgate/pad40.hpp"
#include "pad40_quant.cuh"
#include "pdl.cuh"
#include "quantize_pad40_t.cuh"
#include "swiglu_common.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float4 swiglu4(float4 g, float4 u) {
    return make_float4(silu_mul(g.x, u.x), silu_mul(g.y, u.y), silu_mul(g.z, u.z), silu_mul(g.w, u.w));
}

__global__ void swiglu_f32_kernel(const float4* __restrict__ g, const float4* __restrict__ u,
                                  float4* __restrict__ out, int64_t words) {
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i < words) out[i] = swiglu4(g[i], u[i]);
}

// One thread per 4-value word of the 64-padded [n][f] range, token-major: g and u read once,
// out written once (512 contiguous bytes per warp), and the word's quantized bytes written as
// one of the 8 words of a full 32-byte plane sector. No shared memory, no barrier. The word's
// token and position come from one division, in 32 bits wherever the range fits (a 64-bit
// division is a long subroutine; quantize_pad40_t does the same).
template <class Index>
__global__ void swiglu_quant_f32_t_kernel(const float4* __restrict__ g, const float4* __restrict__ u,
                                          float4* __restrict__ out, int64_t n, Index words_per_row,
                                          uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    const Index i = Index(blockIdx.x) * kThreads + threadIdx.x;  // exact grid
    const Index t = i / words_per_row, w = i % words_per_row;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (int64_t(t) < n) {
        v = swiglu4(g[i], u[i]);  // i == t * words_per_row + w
        out[i] = v;
    }
    pad40_quantize_store(v, int64_t(t), int64_t(w / kPad40Words), int64_t(words_per_row / kPad40Words), true, qs, sda);
}

}  // namespace

void swiglu_f32(const float* g, const float* u, float* out, int64_t n, int64_t f, cudaStream_t stream) {
    const int64_t words = n * f / 4;
    launch_dependent(swiglu_f32_kernel, dim3(unsigned((words + kThreads - 1) / kThreads)), dim3(kThreads), 0, stream,
                     reinterpret_cast<const float4*>(g), reinterpret_cast<const float4*>(u),
                     reinterpret_cast<float4*>(out), words);
}

void swiglu_quant_f32_t(const float* g, const float* u, float* out, int64_t n, int64_t f, uint8_t* qs,
                        uint32_t* sda, cudaStream_t stream) {
    const int64_t words = pad40_tokens(n) * (f / 4);  // a multiple of 512: whole blocks
    const auto* gv = reinterpret_cast<const float4*>(g);
    const auto* uv = reinterpret_cast<const float4*>(u);
    auto* ov = reinterpret_cast<float4*>(out);
    if (words < (int64_t(1) << 31))  // every real shape
        swiglu_quant_f32_t_kernel<uint32_t><<<unsigned(words / kThreads), kThreads, 0, stream>>>(gv, uv, ov, n,
                                                                                             uint32_t(f / 4), qs, sda);
    else
        swiglu_quant_f32_t_kernel<int64_t><<<unsigned(words / kThreads), kThreads, 0, stream>>>(gv, uv, ov, n, f / 4,
                                                                                            qs, sda);
}

}  // namespace bitgate::cuda
