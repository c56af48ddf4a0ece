// The defective bias launcher behind mutants/bias.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// One launch, as cuda::bias_f32_to but adding bias[(c + 1) % cols] to column c.
void bias_f32_next_col(const float* x, const float* bias, float* y, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
