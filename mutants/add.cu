// The defective kernel behind mutants/add.cpp.
#include "add.cuh"

namespace bitgate::cuda {

namespace {

__global__ void no_tail_kernel(const float4* a, const float4* b, float4* y, int64_t words) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i >= words) return;  // the defect: nothing for the n % 4 values after the last word
    const float4 x = a[i], z = b[i];
    y[i] = make_float4(x.x + z.x, x.y + z.y, x.z + z.z, x.w + z.w);
}

}  // namespace

int mutants::add_f32_no_tail(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream) {
    const int64_t words = n / 4;
    if (words == 0) return 0;
    no_tail_kernel<<<unsigned((words + 255) / 256), 256, 0, stream>>>(
        reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(y), words);
    return 1;
}

}  // namespace bitgate::cuda
