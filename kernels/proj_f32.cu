#include "proj_f32.cuh"

#include <cstdint>


namespace bitgate::cuda {

namespace {

constexpr int kRowsPerBlock = 4;

// One warp per row; lane l takes float4 groups l, l+32, ... (refimpl/proj_f32.hpp has the order).
template <bool kVector>
__global__ void __launch_bounds__(kRowsPerBlock * 32) proj_f32_kernel(const float* __restrict__ w,
                                                                       const float* __restrict__ x,
                                                                       float* __restrict__ y, int64_t n, int64_t k) {
    const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= n) return;  // uniform across the warp
    const float* wr = w + row * k;
    float acc = 0.0f;
    for (int64_t q = lane; q < k / 4; q += 32) {
        float4 a, b;
        if constexpr (kVector) {
            a = reinterpret_cast<const float4*>(wr)[q];
            b = reinterpret_cast<const float4*>(x)[q];
        } else {
            a = make_float4(wr[4 * q], wr[4 * q + 1], wr[4 * q + 2], wr[4 * q + 3]);
            b = make_float4(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
        }
        acc = fmaf(a.x, b.x, acc);
        acc = fmaf(a.y, b.y, acc);
        acc = fmaf(a.z, b.z, acc);
        acc = fmaf(a.w, b.w, acc);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc = acc + __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane == 0) y[row] = acc;
}

}  // namespace

void proj_f32(const float* w, const float* x, float* y, int64_t n, int64_t k, cudaStream_t stream) {
    const unsigned grid = unsigned((n + kRowsPerBlock - 1) / kRowsPerBlock);
    const bool vector = reinterpret_cast<uintptr_t>(w) % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (vector) proj_f32_kernel<true><<<grid, kRowsPerBlock * 32, 0, stream>>>(w, x, y, n, k);
    else proj_f32_kernel<false><<<grid, kRowsPerBlock * 32, 0, stream>>>(w, x, y, n, k);
}

}  // namespace bitgate::cuda
