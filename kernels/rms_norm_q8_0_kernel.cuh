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

// Warps a row: up to 64 tokens (decode has one) 32 warps share a row, so that a 3584-wide row's
// 112 Q8_0 blocks are 3 or 4 a warp; from 65 tokens one warp a row. Each warp computes the row's
// scale itself (rms_row_sumsq: the same bits in every warp) and needs nothing from the others:
// no shared memory, no barrier. (A first version gave a row to one block of 8 warps, wrote y,
// and after a barrier quantized 14 blocks a warp from y read back: 7.9 us back to back at n = 1,
// d = 3584, against 4.8 for the unfused pair; bench/RESULTS.md, 2026-12-04, eighth.)
constexpr int rms_q8_parts(int64_t n) { return n <= 64 ? 32 : 1; }
constexpr int kQ8Warps = 8;    // warps a CUDA block
constexpr int kQ8Batch = 4;    // Q8_0 blocks whose values a warp loads before it quantizes the first

// Warp `part` of the P warps of row `row` takes the row's Q8_0 blocks part, part + P, ...: lane
// j normalizes value j of the block as rms_norm_f32 does (rms_apply1, the arithmetic rms_apply
// runs per component), writes it to y, and the warp quantizes the 32 values with the code
// quantize_q8_0 runs (quantize_q8_0_block_warp).
template <int P, Defect D>
__global__ void __launch_bounds__(kQ8Warps * 32)
    rms_norm_q8_0_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                         BlockQ8_0* __restrict__ xq, int64_t n, int64_t d) {
    static_assert(P == 1 || P % kQ8Warps == 0);
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int lane = threadIdx.x % 32;
    const int64_t gw = int64_t(blockIdx.x) * kQ8Warps + threadIdx.x / 32;
    const int64_t row = gw / P, part = gw % P;
    if (row >= n) return;  // whole warps leave together
    const int64_t blocks = d / QK8_0;
    const float* xr = x + row * d;
    const float scale = rms_scale(
        rms_row_sumsq<kRmsSumBatchFor<P>>(reinterpret_cast<const float4*>(xr), d / 4, lane), d);
    const int64_t end = D == Defect::last_block ? blocks - 1 : blocks;
    for (int64_t b0 = part; b0 < end; b0 += int64_t(P) * kQ8Batch) {
        float v[kQ8Batch];
#pragma unroll
        for (int i = 0; i < kQ8Batch; ++i) {
            const int64_t b = b0 + int64_t(P) * i, at = b * QK8_0 + lane;
            v[i] = b < end ? rms_apply1(xr[at], scale, w[at]) : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kQ8Batch; ++i) {
            const int64_t b = b0 + int64_t(P) * i;
            if (b >= end) break;  // b is warp-uniform
            y[row * d + b * QK8_0 + lane] = v[i];
            quantize_q8_0_block_warp(D == Defect::quantize_x ? xr[b * QK8_0 + lane] : v[i], xq + row * blocks + b, lane);
        }
    }
}

template <Defect D>
void launch_rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d,
                          cudaStream_t stream) {
    if (n <= 0) return;
    auto launch = [&](auto kernel, int64_t parts) {
        const int64_t warps = n * parts;
        launch_dependent(kernel, dim3(unsigned((warps + kQ8Warps - 1) / kQ8Warps)), dim3(kQ8Warps * 32), 0, stream, x,
                         w, y, xq, n, d);
    };
    if (rms_q8_parts(n) == 32) return launch(rms_norm_q8_0_kernel<32, D>, 32);
    launch(rms_norm_q8_0_kernel<1, D>, 1);
}

}  // namespace bitgate::cuda::rms_q8
