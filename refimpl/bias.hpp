// Host model of bias_f32: y[r][c] += bias[c] over rows x cols f32, in place; bias_f32_to is the
// same sum written to a separate y (y may be x).
#pragma once
#include <cstdint>

namespace bitgate::ref {

void bias_f32_to(const float* x, const float* bias, float* y, int64_t rows, int64_t cols);

inline void bias_f32(float* y, const float* bias, int64_t rows, int64_t cols) { bias_f32_to(y, bias, y, rows, cols); }

}  // namespace bitgate::ref
