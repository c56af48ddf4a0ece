// The defective kernel behind kernels/mutants/bias_mutants.cpp.
#include "bitgate/spec.hpp"

namespace bitgate::cuda {

namespace {

__global__ void next_col_kernel(const float* x, const float* bias, float* y, int64_t count, int64_t cols) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i < count) y[i] = x[i] + bias[(i % cols + 1) % cols];  // the defect: the next column's bias
}

int launch(const Shape& s, const DeviceIo& io) {
    const int64_t count = s["n"] * s["d"];
    next_col_kernel<<<unsigned((count + 255) / 256), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        io.input<float>(0), io.input<float>(1), io.output<float>(0), count, s["d"]);
    return 1;
}

BITGATE_DEVICE("bias", "m_next_col", launch);

}  // namespace

}  // namespace bitgate::cuda
