#include "proj_f32.cuh"

#include <cstdint>


namespace bitgate::cuda {

namespace {

// One warp per row and one row per CUDA block; lane l takes float4 groups l, l+32, ... in
// ascending order (refimpl/proj_f32.hpp has the order). Scheduling, which moves no bit: a lane
// loads kDepth of its groups before their fmas, so a row is kDepth times fewer memory round trips,
// and a block of one warp spreads even a few rows over as many SMs. Measured on the H200 back to
// back (bench/RESULTS.md, 2026-12-02, fourth), against one group at a time and 4 rows a block:
// 96 x 7168 11.88 -> 7.84 us, 512 x 3584 7.00 -> 5.42, 1024 x 7168 13.95 -> 10.62, 4096 x 4096
// 18.08 -> 17.23, 3584 x 18944 63.35 -> 61.63; depth 8, or 4 with 4 rows a block, was slower.
constexpr int kDepth = 4;

template <bool kVector>
__global__ void __launch_bounds__(32) proj_f32_kernel(const float* __restrict__ w, const float* __restrict__ x,
                                                      float* __restrict__ y, int64_t k) {
    const int64_t row = blockIdx.x;
    const int lane = threadIdx.x;
    const float* wr = w + row * k;
    const int64_t groups = k / 4;
    auto load = [&](const float* p, int64_t q) {
        if constexpr (kVector) return reinterpret_cast<const float4*>(p)[q];
        else return make_float4(p[4 * q], p[4 * q + 1], p[4 * q + 2], p[4 * q + 3]);
    };
    float acc = 0.0f;
    for (int64_t q0 = lane; q0 < groups; q0 += 32 * kDepth) {
        float4 a[kDepth], b[kDepth];
#pragma unroll
        for (int d = 0; d < kDepth; ++d) {
            const int64_t q = q0 + 32 * d;
            if (q < groups) a[d] = load(wr, q), b[d] = load(x, q);
        }
#pragma unroll
        for (int d = 0; d < kDepth; ++d) {
            if (q0 + 32 * d >= groups) break;
            acc = fmaf(a[d].x, b[d].x, acc);
            acc = fmaf(a[d].y, b[d].y, acc);
            acc = fmaf(a[d].z, b[d].z, acc);
            acc = fmaf(a[d].w, b[d].w, acc);
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc = acc + __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) y[row] = acc;
}

}  // namespace

void proj_f32(const float* w, const float* x, float* y, int64_t n, int64_t k, cudaStream_t stream) {
    if (n == 0) return;
    const bool vector = reinterpret_cast<uintptr_t>(w) % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (vector) proj_f32_kernel<true><<<unsigned(n), 32, 0, stream>>>(w, x, y, k);
    else proj_f32_kernel<false><<<unsigned(n), 32, 0, stream>>>(w, x, y, k);
}

}  // namespace bitgate::cuda
