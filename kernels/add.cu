#include "add.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

// One thread per float4 word; the thread after the last word adds the n % 4 tail values one by
// one. y may alias a (each value is read and written by one thread): no __restrict__ on them.
__global__ void add_f32_kernel(const float* a, const float* __restrict__ b, float* y, int64_t n) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    const int64_t words = n / 4;
    if (i < words) {
        const float4 x = reinterpret_cast<const float4*>(a)[i], z = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(y)[i] = make_float4(x.x + z.x, x.y + z.y, x.z + z.z, x.w + z.w);
    } else if (i == words) {
        for (int64_t j = 4 * words; j < n; ++j) y[j] = a[j] + b[j];
    }
}

}  // namespace

void add_f32(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream) {
    if (n <= 0) return;
    const int64_t threads = n / 4 + 1;
    add_f32_kernel<<<unsigned((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(a, b, y, n);
}

}  // namespace bitgate::cuda
