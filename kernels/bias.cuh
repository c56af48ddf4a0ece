// bias: y[r][c] += bias[c] over rows x cols f32 (bias_f32, in place), or y = x + bias
// (bias_f32_to; y may be x). One launch; x, y, bias 16-byte aligned; cols a multiple of 4 takes
// the float4 path, any other cols the scalar one.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

void bias_f32_to(const float* x, const float* bias, float* y, int64_t rows, int64_t cols, cudaStream_t stream);

inline void bias_f32(float* y, const float* bias, int64_t rows, int64_t cols, cudaStream_t stream) {
    bias_f32_to(y, bias, y, rows, cols, stream);
}

}  // namespace bitgate::cuda
