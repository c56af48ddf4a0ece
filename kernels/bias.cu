#include "bias.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

// One thread per float4 word of the flat rows x cols range (cols % 4 == 0, so a word never
// straddles two rows); the bias word is word w % (cols / 4), read through L1 by every row.
__global__ void bias_f32_kernel4(const float4* x, const float4* __restrict__ bias, float4* y, int64_t words,
                                 int64_t words_per_row) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= words) return;
    const float4 v = x[i], b = bias[i % words_per_row];
    y[i] = make_float4(v.x + b.x, v.y + b.y, v.z + b.z, v.w + b.w);
}

__global__ void bias_f32_kernel1(const float* x, const float* __restrict__ bias, float* y, int64_t count, int64_t cols) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i < count) y[i] = x[i] + bias[i % cols];
}

}  // namespace

void bias_f32_to(const float* x, const float* bias, float* y, int64_t rows, int64_t cols, cudaStream_t stream) {
    const int64_t count = rows * cols;
    if (count <= 0) return;
    if (cols % 4 == 0) {
        const int64_t words = count / 4;
        bias_f32_kernel4<<<unsigned((words + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(bias), reinterpret_cast<float4*>(y),
            words, cols / 4);
    } else {
        bias_f32_kernel1<<<unsigned((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x, bias, y, count, cols);
    }
}

}  // namespace bitgate::cuda
