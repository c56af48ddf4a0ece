// The rms_norm kernels (launchers in kernels/rms_norm.cu). tests/rms_norm_sim_test.cpp compiles
// this file for the CPU under tests/cuda_sim.hpp and compares the kernels with the host models.
#pragma once
#if !defined(BITGATE_CUDA_SIM)
#include <cuda_runtime.h>
#endif

#include <cstdint>

#include "bitgate/pad40.hpp"
#include "pad40_quant.cuh"
#include "pdl.cuh"
#include "rms_norm_common.cuh"

namespace bitgate::cuda::rms {
namespace {  // internal to the one translation unit that launches them, as before the split

// P warps per row (P = rms_f32_parts(n): 8 up to 64 tokens, else 1), 8 warps a block: each of a
// row's warps computes the row's scale (the same instructions on the same words: the same bits),
// then y from a second read of the row (from L1/L2: it was just read), taking every P-th step of
// 32 float4 words, kRmsF32Batch steps' loads issued before the first store. With one warp a row
// and a load per step, a decode row (n = 1, d = 3584) queued 28 dependent trips to memory in one
// warp (bench/RESULTS.md, 2026-12-04, eighth).
template <int P>
__global__ void __launch_bounds__(kRmsThreads) rms_norm_f32_kernel(const float4* __restrict__ x, const float4* __restrict__ w,
                                                                   float4* __restrict__ y, int64_t n, int64_t d) {
    static_assert(kRmsRowsPerBlock % P == 0);
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, part = warp % P;
    const int64_t row = int64_t(blockIdx.x) * (kRmsRowsPerBlock / P) + warp / P;
    if (row >= n) return;  // whole warps leave together
    const int64_t groups = d / 4;
    rms_f32_row<P>(x + row * groups, w, y + row * groups, d, part, lane);
}

// P warps per row (P = rms_quant_parts(n)), a block of 4 warps, no shared memory and no barrier:
// each of a row's warps computes the row's scale from rms_row_sumsq (the same instructions on the
// same words: the same bits in every warp), then normalizes, writes and quantizes every P-th step
// of 32 * kRmsWarpWords float4 words, all of a step's loads issued before its first word is
// quantized (lane l: words l, l + 32, ... of the step; 8-lane groups stay whole since d / 4 is a
// multiple of 8). Rows past n (the 64-padded tail) quantize zeros into both planes and write no y.
// One warp a row replaced 8 rows a 256-thread block sharing a barrier and one flat pass over the
// block's words: 59.5 -> 49.1 us back to back at n = 3325, d = 3584 on the H200; at n = 512 that
// is 4 warps an SM, too few to hide a row's latencies (22.9 us against the unfused pair's 20.9:
// bench/RESULTS.md, 2026-12-02), hence 4 warps a row there, the first pass read four times (from
// L1 after the first).
template <int P>
__global__ void __launch_bounds__(kRmsQuantWarps * 32)
    rms_norm_quant_f32_t_kernel(const float4* __restrict__ x, const float4* __restrict__ w, float4* __restrict__ y,
                                int64_t n, int64_t d, uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    static_assert(kRmsQuantWarps % P == 0);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, part = warp % P;
    const int64_t row = int64_t(blockIdx.x) * (kRmsQuantWarps / P) + warp / P;  // < pad40_tokens(n): the grid
    const int64_t groups = d / 4, nchunk = d / kPad40Chunk;
    const bool real = row < n;
    const float4* xr = x + row * groups;
    const float scale = real ? rms_scale(rms_row_sumsq(xr, groups, lane), d) : 0.0f;
    constexpr int kStep = 32 * kRmsWarpWords;
    for (int64_t g0 = int64_t(part) * kStep; g0 < groups; g0 += int64_t(P) * kStep) {
        float4 v[kRmsWarpWords];
#pragma unroll
        for (int b = 0; b < kRmsWarpWords; ++b) {
            const int64_t g = g0 + 32 * b + lane;
            v[b] = real && g < groups ? rms_apply(xr[g], scale, w[g]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < kRmsWarpWords; ++b) {
            if (g0 + 32 * b >= groups) break;  // the whole warp
            const int64_t g = g0 + 32 * b + lane;
            const bool mine = g < groups;
            if (real && mine) y[row * groups + g] = v[b];
            pad40_quantize_store(v[b], row, (mine ? g : 0) / kPad40Words, nchunk, mine, qs, sda);
        }
    }
}

}  // namespace
}  // namespace bitgate::cuda::rms
