// The fused rms_norm_q8_0 kernel as a template over a defect: kernels/rms_norm_q8_0.cu launches
// it sound, mutants/rms_norm_q8_0.cu with a defect switched on.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "bitgate/formats.hpp"
#include "pdl.cuh"
#include "q8_0_block.cuh"
#include "rms_norm_common.cuh"

namespace bitgate::cuda::rms_q8 {

enum class Defect {
    none,
    quantize_x,  // quantizes the input row instead of y
    last_block,  // leaves each row's last Q8_0 block unwritten
};

// Q8_0 blocks of a row whose values a warp loads before it quantizes the first (one trip to
// memory for a 3584-wide row: 112 blocks over 8 warps).
constexpr int kQ8Batch = 16;

// One block of 8 warps per row: y as rms_norm_f32 computes it with 8 warps a row (rms_f32_row,
// the same code), a barrier, then the row's Q8_0 blocks dealt to the warps (warp w: blocks w,
// w + 8, ...), each quantized by the code quantize_q8_0 runs (quantize_q8_0_block_warp) from y
// read back: the barrier makes the other warps' y visible to the block, and y is read through
// the pointer that wrote it (no non-coherent load).
template <Defect D>
__global__ void __launch_bounds__(kRmsThreads)
    rms_norm_q8_0_kernel(const float4* __restrict__ x, const float4* __restrict__ w, float* y,
                         BlockQ8_0* __restrict__ xq, int64_t d) {
    wait_for_producer();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    allow_dependents();
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t row = blockIdx.x, groups = d / 4, blocks = d / QK8_0;
    float* yr = y + row * d;
    rms_f32_row<kRmsRowsPerBlock>(x + row * groups, w, reinterpret_cast<float4*>(yr), d, warp, lane);
    __syncthreads();
    const float* src = D == Defect::quantize_x ? reinterpret_cast<const float*>(x + row * groups) : yr;
    const int64_t end = D == Defect::last_block ? blocks - 1 : blocks;
    for (int64_t b0 = warp; b0 < end; b0 += int64_t(kRmsRowsPerBlock) * kQ8Batch) {
        float v[kQ8Batch];
#pragma unroll
        for (int i = 0; i < kQ8Batch; ++i) {
            const int64_t b = b0 + int64_t(kRmsRowsPerBlock) * i;
            v[i] = b < end ? src[b * QK8_0 + lane] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kQ8Batch; ++i) {
            const int64_t b = b0 + int64_t(kRmsRowsPerBlock) * i;
            if (b < end) quantize_q8_0_block_warp(v[i], xq + row * blocks + b, lane);  // b is warp-uniform
        }
    }
}

template <Defect D>
void launch_rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d,
                          cudaStream_t stream) {
    if (n <= 0) return;
    launch_dependent(rms_norm_q8_0_kernel<D>, dim3(unsigned(n)), dim3(kRmsThreads), 0, stream,
                     reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(w), y, xq, d);
}

}  // namespace bitgate::cuda::rms_q8
