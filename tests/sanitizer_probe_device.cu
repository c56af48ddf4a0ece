// Device side of tests/sanitizer_test.cpp: kernels with a planted defect for compute-sanitizer's
// memcheck and initcheck to find, and a sound control, each on allocations of its own.
#include <cuda_runtime.h>

#include <string>

namespace bitgate::test {

namespace {

// kProbeFloats floats (4,000 bytes, not a multiple of the allocator's granule): the float after
// the last lies inside the granule's padding, in no allocation, where memcheck must report it.
constexpr int kProbeFloats = 1000;

__global__ void copy_probe(const float* src, float* dst, int n, int write_at) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i] + 1.0f;
    if (i == 0 && write_at >= 0) dst[write_at] = 2.0f;
}

}  // namespace

// which: "write_past_end" (a store one float past the end of dst), "uninitialized_read" (src never
// written), "sound" (src set by cudaMemset, every access in bounds). Returns the CUDA error, or "".
std::string sanitizer_probe(const std::string& which) {
    float *src = nullptr, *dst = nullptr;
    cudaMalloc(&src, kProbeFloats * sizeof(float));
    cudaMalloc(&dst, kProbeFloats * sizeof(float));
    if (which != "uninitialized_read") cudaMemset(src, 0, kProbeFloats * sizeof(float));
    const int write_at = which == "write_past_end" ? kProbeFloats : -1;
    copy_probe<<<(kProbeFloats + 127) / 128, 128>>>(src, dst, kProbeFloats, write_at);
    cudaDeviceSynchronize();
    const cudaError_t err = cudaGetLastError();
    cudaFree(src);
    cudaFree(dst);
    return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

}  // namespace bitgate::test
