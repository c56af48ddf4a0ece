#include "quantize_pad40_t.cuh"

#include "bitgate/pad40.hpp"
#include "pad40_quant.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;
// Words per thread, all loaded before the first is quantized: with one 16-byte load a thread, a
// full SM had 32 KB in flight and the kernel read at 46% of the ceiling at n = 3325, d = 3584;
// four keep 128 KB an SM in flight. With the division below taken out of the per-word work:
// 62% at d = 3584 and 71% at d = 18944 back to back (bench/RESULTS.md), still short of the 80%
// the kernel should reach.
constexpr int kWordsPerThread = 4;

// One thread per 4-value word of the 64-padded activation, token-major: a warp reads 512
// contiguous bytes of one token and writes four full 32-byte sectors, one per chunk.
// d/4 is a multiple of 8, so the 8 lanes of an aligned group share one (token, chunk). A thread
// takes words i, i + kThreads, ... of its block's span. The word count is a multiple of 512, so
// a warp's 32 words are all in range or all out: the shuffles always have the full warp.
template <class Index>
__global__ void __launch_bounds__(kThreads) quantize_pad40_t_kernel(const float4* __restrict__ x, int64_t n,
                                                                    Index words, Index words_per_row,
                                                                    uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    // Token t and word w of each of the thread's words: one division, then steps of kThreads
    // words (Nsight Compute: the kernel issued 0.79 instructions a cycle per scheduler with a
    // division and a remainder per word in each loop; it is bound by issue, not by DRAM).
    const Index i0 = Index(blockIdx.x) * (kThreads * kWordsPerThread) + threadIdx.x;
    Index t[kWordsPerThread], w[kWordsPerThread];
    t[0] = i0 / words_per_row, w[0] = i0 % words_per_row;
#pragma unroll
    for (int u = 1; u < kWordsPerThread; ++u) {
        if (words_per_row >= kThreads) {  // d >= 1024: at most one row boundary per step
            t[u] = t[u - 1], w[u] = w[u - 1] + kThreads;
            if (w[u] >= words_per_row) w[u] -= words_per_row, ++t[u];
        } else {
            const Index i = i0 + Index(u) * kThreads;
            t[u] = i / words_per_row, w[u] = i % words_per_row;
        }
    }
    float4 v[kWordsPerThread];
#pragma unroll
    for (int u = 0; u < kWordsPerThread; ++u) {
        const Index i = i0 + Index(u) * kThreads;
        v[u] = i < words && int64_t(t[u]) < n ? x[int64_t(t[u]) * int64_t(words_per_row) + int64_t(w[u])]
                                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    const int64_t nchunk = int64_t(words_per_row / kPad40Words);
#pragma unroll
    for (int u = 0; u < kWordsPerThread; ++u) {
        if (i0 + Index(u) * kThreads >= words) break;  // uniform across the warp
        pad40_quantize_store(v[u], int64_t(t[u]), int64_t(w[u] / kPad40Words), nchunk, true, qs, sda);
    }
}

}  // namespace

void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    const int64_t words = pad40_tokens(n) * (d / 4);  // a multiple of 64 * 8: whole warps
    const unsigned grid = unsigned((words + kThreads * kWordsPerThread - 1) / (kThreads * kWordsPerThread));
    const auto* xv = reinterpret_cast<const float4*>(x);
    if (words < (int64_t(1) << 31))  // 32-bit index arithmetic wherever it fits (every real shape)
        quantize_pad40_t_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(xv, n, uint32_t(words), uint32_t(d / 4), qs, sda);
    else
        quantize_pad40_t_kernel<int64_t><<<grid, kThreads, 0, stream>>>(xv, n, words, d / 4, qs, sda);
}

}  // namespace bitgate::cuda
