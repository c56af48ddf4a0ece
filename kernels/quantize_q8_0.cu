#include "quantize_q8_0.cuh"

#include "pdl.cuh"
#include "q8_0_block.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kWarpsPerBlock = 8;

// One warp per Q8_0 block, one lane per value (kernels/q8_0_block.cuh).
__global__ void quantize_q8_0_kernel(const float* __restrict__ x, BlockQ8_0* __restrict__ y, int64_t nblocks) {
    // Launched as dependent (kernels/pdl.cuh): its blocks may be scheduled while the kernel before
    // it drains, and read nothing before that kernel has completed. A projection launched as
    // dependent after this kernel may start now and fetch its weights: it waits for this kernel to
    // complete before it reads y.
    wait_then_allow_dependents();
    const int64_t b = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (b >= nblocks) return;  // whole warps leave together: b is uniform across a warp
    quantize_q8_0_block_warp(x[b * QK8_0 + lane], y + b, lane);
}

}  // namespace

void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t k, cudaStream_t stream) {
    const int64_t nblocks = k / QK8_0;
    const unsigned grid = unsigned((nblocks + kWarpsPerBlock - 1) / kWarpsPerBlock);
    launch_dependent(quantize_q8_0_kernel, dim3(grid), dim3(kWarpsPerBlock * 32), 0, stream, x, y, nblocks);
}

}  // namespace bitgate::cuda
