// The fused swiglu_q8_0 kernel as a template over a defect: kernels/swiglu_q8_0.cu launches it
// sound, mutants/swiglu_q8_0.cu with a defect switched on.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "bitgate/formats.hpp"
#include "pdl.cuh"
#include "q8_0_block.cuh"
#include "swiglu_common.cuh"

namespace bitgate::cuda::swiglu_q8 {

enum class Defect {
    none,
    quantize_g,  // quantizes the gate input instead of the SwiGLU value
    skip_last,   // leaves the last Q8_0 block unwritten
};

constexpr int kWarps = 8;  // a CUDA block

// One warp per Q8_0 block of the [n][f] range (rows of f values are whole blocks), lane j on
// value j: SwiGLU as swiglu_f32 computes it (silu_mul), written to out, and the block quantized
// with the code quantize_q8_0 runs (quantize_q8_0_block_warp). No shared memory, no barrier.
template <Defect D>
__global__ void __launch_bounds__(kWarps * 32)
    swiglu_q8_0_kernel(const float* __restrict__ g, const float* __restrict__ u, float* __restrict__ out,
                       BlockQ8_0* __restrict__ xq, int64_t nblocks) {
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int64_t b = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (b >= (D == Defect::skip_last ? nblocks - 1 : nblocks)) return;  // whole warps leave together
    const int64_t i = b * QK8_0 + lane;
    const float v = silu_mul(g[i], u[i]);
    out[i] = v;
    quantize_q8_0_block_warp(D == Defect::quantize_g ? g[i] : v, xq + b, lane);
}

template <Defect D>
void launch_swiglu_q8_0(const float* g, const float* u, float* out, BlockQ8_0* xq, int64_t n, int64_t f,
                        cudaStream_t stream) {
    const int64_t nblocks = n * (f / QK8_0);
    if (nblocks <= 0) return;
    launch_dependent(swiglu_q8_0_kernel<D>, dim3(unsigned((nblocks + kWarps - 1) / kWarps)), dim3(kWarps * 32), 0,
                     stream, g, u, out, xq, nblocks);
}

}  // namespace bitgate::cuda::swiglu_q8
