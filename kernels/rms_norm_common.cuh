// The row reduction both rms_norm kernels share, and the mutants reuse.
#pragma once
#include <cstdint>

namespace bitgate::cuda {

constexpr float kRmsEps = 1e-6f;  // refimpl/rms_norm.hpp says the same
constexpr int kRmsRowsPerBlock = 8;  // rms_norm_f32: 8 warps a block, one row per warp from 65 tokens
constexpr int kRmsThreads = kRmsRowsPerBlock * 32;
// rms_norm_f32 up to 64 tokens (decode is one): the 8 warps of a block share one row, each with
// the row's scale, so that a row's loads are spread over 8 warps instead of queued behind one
// (scheduling only: every warp of a row computes the same bits). kRmsF32Batch steps of 32 words
// a lane in flight at a time in the second pass, kRmsF32SumBatch words a lane in the first.
constexpr int rms_f32_parts(int64_t n) { return n <= 64 ? kRmsRowsPerBlock : 1; }
constexpr int kRmsF32Batch = 4;
constexpr int kRmsF32SumBatch = 32;
// The fused kernel: blocks of 4 warps, a row to every warp, or to 4 warps below 1,024 tokens
// (scheduling only: every warp of a row computes the same bits). 64 padded tokens are whole
// blocks either way. Each lane has 4 float4 words of its row in flight at a time in the second pass.
constexpr int kRmsQuantWarps = 4;
constexpr int kRmsWarpWords = 4;
constexpr int rms_quant_parts(int64_t n) { return n < 1024 ? 4 : 1; }
static_assert(64 % kRmsQuantWarps == 0);

// The xor tree 16, 8, 4, 2, 1 over a warp's partial sums (a + b == b + a exactly, so both partners
// of a pair agree and every lane ends with the same bits).
__device__ __forceinline__ float rms_warp_total(float acc) {
    for (int off = 16; off > 0; off >>= 1) acc = acc + __shfl_xor_sync(0xffffffffu, acc, off);
    return acc;
}

// Sum of squares of one row by one warp, every lane ending with the same bits: lane l adds the
// float4 groups l, l+32, ... (x, y, z, w in order, acc = acc + v*v), then rms_warp_total. The
// loads come in batches of kRmsSumBatch words a lane, all issued before the batch's first add: a
// load per add left one row's latency per word on the path (at n = 512 a warp per row is 4 warps
// an SM, too few to hide it).
// The batch is scheduling only (the adds run in the same order): the kernels with one warp a row
// keep 8, since more words in flight cost them warps; the decode kernel, 8 warps on one row,
// takes kRmsF32SumBatch, a 3584-wide row in one trip.
constexpr int kRmsSumBatch = 8;
// The first pass's batch for P warps a row.
template <int P>
constexpr int kRmsSumBatchFor = P == 1 ? kRmsSumBatch : kRmsF32SumBatch;
template <int Batch = kRmsSumBatch>
__device__ __forceinline__ float rms_row_sumsq(const float4* __restrict__ xr, int64_t groups, int lane) {
    float acc = 0.0f;
    for (int64_t g0 = 0; g0 < groups; g0 += 32 * Batch) {
        float4 v[Batch];
#pragma unroll
        for (int b = 0; b < Batch; ++b) {
            const int64_t g = g0 + 32 * b + lane;
            if (g < groups) v[b] = xr[g];
        }
#pragma unroll
        for (int b = 0; b < Batch; ++b) {
            if (g0 + 32 * b + lane < groups) {
                acc = acc + v[b].x * v[b].x;
                acc = acc + v[b].y * v[b].y;
                acc = acc + v[b].z * v[b].z;
                acc = acc + v[b].w * v[b].w;
            }
        }
    }
    return rms_warp_total(acc);
}

// IEEE division and square root (-prec-div=true -prec-sqrt=true): never the approximate reciprocal square root.
__device__ __forceinline__ float rms_scale(float ss, int64_t d) { return 1.0f / sqrtf(ss / float(d) + kRmsEps); }

// One normalized value, (x * scale) * w: each product rounded (-fmad=false), as the host model.
__device__ __forceinline__ float rms_apply1(float x, float scale, float w) { return (x * scale) * w; }

__device__ __forceinline__ float4 rms_apply(float4 x, float scale, float4 w) {
    return make_float4(rms_apply1(x.x, scale, w.x), rms_apply1(x.y, scale, w.y), rms_apply1(x.z, scale, w.z),
                       rms_apply1(x.w, scale, w.w));
}

// Row `xr` of d values normalized into `yr` by this warp, part `part` of the P warps that share
// the row: the scale from rms_row_sumsq (every warp of the row gets the same bits), then every
// P-th step of 32 float4 words, kRmsF32Batch steps' loads issued before the first store.
template <int P>
__device__ __forceinline__ void rms_f32_row(const float4* __restrict__ xr, const float4* __restrict__ w,
                                            float4* __restrict__ yr, int64_t d, int part, int lane) {
    const int64_t groups = d / 4;
    const float scale = rms_scale(rms_row_sumsq<kRmsSumBatchFor<P>>(xr, groups, lane), d);
    for (int64_t s0 = part; 32 * s0 < groups; s0 += int64_t(P) * kRmsF32Batch) {
        float4 xv[kRmsF32Batch], wv[kRmsF32Batch];
#pragma unroll
        for (int b = 0; b < kRmsF32Batch; ++b) {
            const int64_t g = 32 * (s0 + int64_t(P) * b) + lane;
            xv[b] = g < groups ? xr[g] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            wv[b] = g < groups ? w[g] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < kRmsF32Batch; ++b) {
            const int64_t g = 32 * (s0 + int64_t(P) * b) + lane;
            if (g < groups) yr[g] = rms_apply(xv[b], scale, wv[b]);
        }
    }
}

}  // namespace bitgate::cuda
