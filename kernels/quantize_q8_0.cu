#include "quantize_q8_0.cuh"

#include <cuda_fp16.h>

#include "bitgate/q8_round.hpp"
#include "pdl.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

// One warp per Q8_0 block, one lane per value. The maximum of finite values is order-independent
// and exact, so the shuffle tree needs no fixed shape (NaNs are placed by a ballot, below); the division and reciprocal are IEEE (-prec-div=true).
__global__ void quantize_q8_0_kernel(const float* __restrict__ x, BlockQ8_0* __restrict__ y, int64_t nblocks) {
    // Launched as dependent (kernels/pdl.cuh): its blocks may be scheduled while the kernel before
    // it drains, and read nothing before that kernel has completed. A projection launched as
    // dependent after this kernel may start now and fetch its weights: it waits for this kernel to
    // complete before it reads y.
    wait_for_producer();
    allow_dependents();
    const int64_t b = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (b >= nblocks) return;  // whole warps leave together: b is uniform across a warp

    const float v = x[b * QK8_0 + lane];
    // ggml's sequential amax = MAX(amax, fabsf(v)), MAX(a, b) = a > b ? a : b, keeps only what
    // follows the block's last NaN (the NaN itself when it is the last value): lanes up to the
    // last NaN drop out of the maximum, and a NaN in lane 31 is the result. Without a NaN this is
    // the plain maximum, as before.
    const unsigned nans = __ballot_sync(0xffffffffu, v != v);
    const int last_nan = nans ? 31 - __clz(nans) : -1;
    float amax = lane <= last_nan ? 0.0f : fabsf(v);
    for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    if (last_nan == 31) amax = __shfl_sync(0xffffffffu, fabsf(v), 31);

    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].qs[lane] = q8_roundf(v * id);
    if (lane == 0) y[b].d = __half_as_ushort(__float2half_rn(d));
}

}  // namespace

void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t k, cudaStream_t stream) {
    const int64_t nblocks = k / QK8_0;
    const unsigned grid = unsigned((nblocks + kWarpsPerBlock - 1) / kWarpsPerBlock);
    launch_dependent(quantize_q8_0_kernel, dim3(grid), dim3(kWarpsPerBlock * 32), 0, stream, x, y, nblocks);
}

}  // namespace bitgate::cuda
