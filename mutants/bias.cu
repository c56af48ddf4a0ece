// The defective kernel behind mutants/bias.cpp.
#include "bias.cuh"

namespace bitgate::cuda {

namespace {

__global__ void next_col_kernel(const float* x, const float* bias, float* y, int64_t count, int64_t cols) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i < count) y[i] = x[i] + bias[(i % cols + 1) % cols];  // the defect: the next column's bias
}

}  // namespace

void mutants::bias_f32_next_col(const float* x, const float* bias, float* y, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
    const int64_t count = rows * cols;
    next_col_kernel<<<unsigned((count + 255) / 256), 256, 0, stream>>>(x, bias, y, count, cols);
}

}  // namespace bitgate::cuda
