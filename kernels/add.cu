#include "add.cuh"

#include "bitgate/spec.hpp"

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

namespace {

// Tensors: a (0), b (1); y (0). The family's n x d values are one flat vector.
int64_t count(const Shape& s) { return s["n"] * s["d"]; }

BITGATE_DEVICE("add", "v1", [](const Shape& s, const DeviceIo& io) {
    add_f32(io.input<float>(0), io.input<float>(1), io.output<float>(0), count(s), static_cast<cudaStream_t>(io.stream));
    return 1;
});
// The in-place call as the forward makes it (the residual stream is a): a copied into y, then y += b.
BITGATE_DEVICE_PREPARE("add", "inplace", [](const Shape& s, const DeviceIo& io) {
    cudaMemcpyAsync(io.out[0], io.in[0], size_t(count(s)) * 4, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(io.stream));
    return 0;
});
BITGATE_DEVICE("add", "inplace", [](const Shape& s, const DeviceIo& io) {
    add_f32(io.output<float>(0), io.input<float>(1), io.output<float>(0), count(s), static_cast<cudaStream_t>(io.stream));
    return 1;
});

}  // namespace

}  // namespace bitgate::cuda
