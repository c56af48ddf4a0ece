#include "bias.hpp"

namespace bitgate::ref {

void bias_f32_to(const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] + bias[c];
}

}  // namespace bitgate::ref
