#include "dependent_launch_kernels.cuh"

#include "../kernels/pdl.cuh"

namespace bitgate::test_kernels {

namespace {

constexpr int kThreads = 256;
constexpr long long kSpinCycles = 40000;  // about 20 us at the H200's 1.98 GHz

__global__ void slow_write_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t words) {
    cuda::allow_dependents();
    const long long t0 = clock64();
    while (clock64() - t0 < kSpinCycles) {
    }
    for (int64_t i = threadIdx.x; i < words; i += kThreads) dst[i] = src[i];
}

__global__ void copy_without_wait_kernel(const uint4* in, uint4* out, int64_t words) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i < words) out[i] = in[i];  // no wait_for_producer(): the defect
}

}  // namespace

void slow_write(const float* src, float* dst, int64_t n, cudaStream_t stream) {
    slow_write_kernel<<<1, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst),
                                                  n / 4);
}

void copy_without_wait(const float* in, uint8_t* out, size_t bytes, cudaStream_t stream) {
    const int64_t words = int64_t(bytes / 16);
    cuda::launch_dependent(copy_without_wait_kernel, dim3(unsigned((words + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                           stream, reinterpret_cast<const uint4*>(in), reinterpret_cast<uint4*>(out), words);
}

}  // namespace bitgate::test_kernels
