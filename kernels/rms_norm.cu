#include "rms_norm.cuh"

#include "bitgate/pad40.hpp"
#include "pad40_quant.cuh"
#include "quantize_pad40_t.cuh"
#include "rms_norm_common.cuh"

namespace bitgate::cuda {

namespace {

// One warp per row, 8 rows per block: the sum of squares, then y from a second read of the row
// (from L1/L2: the row was just read).
__global__ void rms_norm_f32_kernel(const float4* __restrict__ x, const float4* __restrict__ w,
                                    float4* __restrict__ y, int64_t n, int64_t d) {
    const int lane = threadIdx.x % 32;
    const int64_t row = int64_t(blockIdx.x) * kRmsRowsPerBlock + threadIdx.x / 32;
    if (row >= n) return;  // whole warps leave together
    const int64_t groups = d / 4;
    const float4* xr = x + row * groups;
    const float scale = rms_scale(rms_row_sumsq(xr, groups, lane), d);
    for (int64_t g = lane; g < groups; g += 32) y[row * groups + g] = rms_apply(xr[g], scale, w[g]);
}

// Rows of up to 32 * 4 * W values (d <= 4096 at W = 32): one warp per row holding the whole row
// in registers, lane l the float4 groups l, l + 32, ... (rms_row_sumsq's order), so x is read once,
// every load of the row is in flight at once, and there is no shared memory and no barrier. The
// flat kernel below had 8 rows per 256-thread block share a barrier: 64 blocks at n = 512, half
// the card idle, and one row's loads in flight per warp at a time (bench/RESULTS.md). Rows past n
// (the 64-padded tail) quantize zeros into both planes and write no y.
template <int W>
__global__ void __launch_bounds__(kRmsRegRows * 32)
    rms_norm_quant_rowreg_kernel(const float4* __restrict__ x, const float4* __restrict__ w, float4* __restrict__ y,
                                 int64_t n, int64_t d, uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    const int lane = threadIdx.x % 32;
    const int64_t row = int64_t(blockIdx.x) * kRmsRegRows + threadIdx.x / 32;  // < pad40_tokens(n): the grid
    const int groups = int(d / 4);
    const int64_t nchunk = d / kPad40Chunk;
    const bool real = row < n;
    const float4* xr = x + row * groups;
    float4 v[W];
#pragma unroll
    for (int i = 0; i < W; ++i) {
        const int g = lane + 32 * i;
        v[i] = real && g < groups ? xr[g] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float acc = 0.0f;
#pragma unroll
    for (int i = 0; i < W; ++i) {
        if (lane + 32 * i < groups) {
            acc = acc + v[i].x * v[i].x;
            acc = acc + v[i].y * v[i].y;
            acc = acc + v[i].z * v[i].z;
            acc = acc + v[i].w * v[i].w;
        }
    }
    const float scale = real ? rms_scale(rms_warp_total(acc), d) : 0.0f;
    // Normalize first, stores after: the loads of w are issued together, not one per store.
#pragma unroll
    for (int i = 0; i < W; ++i) {
        const int g = lane + 32 * i;
        if (real && g < groups) v[i] = rms_apply(v[i], scale, w[g]);
    }
#pragma unroll
    for (int i = 0; i < W; ++i) {
        if (32 * i >= groups) break;  // whole warp; groups is a multiple of 8, so 8-lane groups stay whole
        const int g = lane + 32 * i;
        const bool mine = g < groups;
        if (real && mine) y[row * groups + g] = v[i];
        pad40_quantize_store(v[i], row, (mine ? g : 0) / kPad40Words, nchunk, mine, qs, sda);
    }
}

// Longer rows (d > 4096): phase 1: warp r of the block computes the scale of row row0 + r into shared memory.
// Barrier. Phase 2: all 256 threads walk the block's 8 rows (contiguous in memory) as one flat
// range of 4-value words, normalize, write y and quantize into the planes. Rows past n (the
// 64-padded tail) get zeros in both planes and no y. The grid covers the padded token count.
// A thread's (row, word) moves by 256 words a step: one division before the loop, then adds
// (a 64-bit division and remainder per word made the kernel as slow as the unfused pair).
__global__ void rms_norm_quant_f32_t_kernel(const float4* __restrict__ x, const float4* __restrict__ w,
                                            float4* __restrict__ y, int64_t n, int64_t d,
                                            uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    __shared__ float s_scale[kRmsRowsPerBlock];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t row0 = int64_t(blockIdx.x) * kRmsRowsPerBlock;
    const int64_t groups = d / 4, nchunk = d / kPad40Chunk;
    if (row0 + warp < n) {
        const float scale = rms_scale(rms_row_sumsq(x + (row0 + warp) * groups, groups, lane), d);
        if (lane == 0) s_scale[warp] = scale;
    }
    __syncthreads();

    const int64_t words = kRmsRowsPerBlock * groups;  // a multiple of 64: whole 8-lane groups
    int64_t r = threadIdx.x / groups, g = threadIdx.x % groups;  // word i = r * groups + g
    for (int64_t base = 0; base < words; base += kRmsThreads) {  // uniform trip count: shuffles stay full
        const bool in = base + threadIdx.x < words;
        const int64_t row = row0 + r;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (in && row < n) {
            v = rms_apply(x[row * groups + g], s_scale[r], w[g]);
            y[row * groups + g] = v;
        }
        pad40_quantize_store(v, row, g / kPad40Words, nchunk, in, qs, sda);
        for (g += kRmsThreads; g >= groups; g -= groups) ++r;  // i += 256 (once for d >= 1024)
    }
}

}  // namespace

void rms_norm_f32(const float* x, const float* w, float* y, int64_t n, int64_t d, cudaStream_t stream) {
    const unsigned blocks = unsigned((n + kRmsRowsPerBlock - 1) / kRmsRowsPerBlock);
    rms_norm_f32_kernel<<<blocks, kRmsThreads, 0, stream>>>(reinterpret_cast<const float4*>(x),
                                                            reinterpret_cast<const float4*>(w),
                                                            reinterpret_cast<float4*>(y), n, d);
}

void rms_norm_quant_f32_t(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs,
                          uint32_t* sda, cudaStream_t stream) {
    const auto xf = reinterpret_cast<const float4*>(x);
    const auto wf = reinterpret_cast<const float4*>(w);
    const auto yf = reinterpret_cast<float4*>(y);
    const unsigned reg_blocks = unsigned(pad40_tokens(n) / kRmsRegRows);
    if (d <= 32 * 4 * 8) {
        rms_norm_quant_rowreg_kernel<8><<<reg_blocks, kRmsRegRows * 32, 0, stream>>>(xf, wf, yf, n, d, qs, sda);
        return;
    }
    if (d <= 32 * 4 * kRmsRegWordsMax) {
        rms_norm_quant_rowreg_kernel<kRmsRegWordsMax><<<reg_blocks, kRmsRegRows * 32, 0, stream>>>(xf, wf, yf, n, d,
                                                                                                   qs, sda);
        return;
    }
    const unsigned blocks = unsigned(pad40_tokens(n) / kRmsRowsPerBlock);
    rms_norm_quant_f32_t_kernel<<<blocks, kRmsThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(w), reinterpret_cast<float4*>(y), n,
        d, qs, sda);
}

}  // namespace bitgate::cuda
