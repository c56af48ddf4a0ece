// The quantize_pad40_t kernel (launcher: kernels/quantize_pad40_t.cu). A header so that
// tests/quantize_pad40_t_sim_test.cpp runs the same source on the CPU under tests/cuda_sim.hpp.
#pragma once
#include <cstdint>

#include "bitgate/pad40.hpp"
#include "cp_async.cuh"
#include "pad40_quant.cuh"
#include "pdl.cuh"

namespace bitgate::cuda::pad40q {

// One block per tile (64 tokens x one 32-value chunk), L lanes quantizing a token's chunk
// (pad40_quantize_lanes_store: 32 / L values a lane, the maximum and the sum meet by xor shuffles,
// every lane does the scale's two IEEE divisions), after the tile is staged in shared memory by
// coalesced 16-byte copies. The launcher takes L = 2 (128 threads) from 2,048 tiles on and L = 4
// (256 threads) below: both give the same bytes, and the choice is the shape's alone. Measured
// in bench/RESULTS.md (2026-12-03), back to back: one thread a chunk (48 registers, 20 blocks of
// 2 warps an SM, its warps waiting on memory with nothing else to issue) read at 77-90% of the
// read ceiling; two lanes (32 registers, every warp slot of the SM filled) are 2-9% faster at
// every shape measured and the fastest from 4,736 tiles on (n = 3325, d = 3584: 17.11 -> 16.54
// us); four lanes are faster still at 896 and 1,456 tiles (n = 512, d = 3584: 4.16 against 4.56
// us) and 1-2% slower than two from 4,736 on. Before that, one thread per word (8 lanes a chunk,
// the divisions in every lane) was bound by issue at 61-71%; loading each lane's values straight
// from global memory (every 16-byte load touching 32 lines) measured 10-12% slower than the
// staging, and persistent blocks with a ring of 2 to 4 tiles slower again.
constexpr int64_t kFourLanesBelowTiles = 2048;
inline constexpr int lanes_for(int64_t tiles) { return tiles < kFourLanesBelowTiles ? 4 : 2; }

constexpr int kRowFloats = kPad40Chunk + 4;  // a token's 32 floats + 16 bytes: conflict-free rows

template <int L>
__global__ void __launch_bounds__(L * kPad40Tokens) quantize_pad40_t_kernel(const float* __restrict__ x, int64_t n,
                                                                            int64_t d, int64_t nchunk,
                                                                            uint8_t* __restrict__ qs,
                                                                            uint32_t* __restrict__ sda) {
    constexpr int kThreads = L * kPad40Tokens;
    __shared__ __align__(16) float tile_x[kPad40Tokens * kRowFloats];
    const int64_t tile = blockIdx.x, tb = tile / nchunk, c = tile % nchunk;
    // Copy: thread i moves 16-byte piece i % 8 of rows i / 8, i / 8 + kThreads / 8, ...: a warp
    // copies four whole 128-byte rows at a time. Padded tokens (t >= n) are zeros: d = 0, q = 0,
    // ssum = 0.
    const int piece = threadIdx.x & 7;
    // Launched as dependent (kernels/pdl.cuh): this grid's blocks take the SMs as the previous
    // kernel's leave, and wait for it to finish before reading x or writing qs and sda; the
    // next kernel, if it is a dependent, may be scheduled as soon as every block here has begun.
    allow_dependents();
    wait_for_producer();
#pragma unroll
    for (int r = threadIdx.x >> 3; r < kPad40Tokens; r += kThreads / 8) {
        const int64_t t = tb * kPad40Tokens + r;
        float* dst = tile_x + r * kRowFloats + piece * 4;
        if (t < n)
            cp_async16(dst, x + t * d + c * kPad40Chunk + piece * 4);
        else
            *reinterpret_cast<float4*>(dst) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    const uint32_t r = threadIdx.x / L, h = threadIdx.x % L;
    pad40_quantize_lanes_store<L>(tile_x + r * kRowFloats + h * (kPad40Chunk / L), r, h, tile, qs, sda);
}

}  // namespace bitgate::cuda::pad40q
