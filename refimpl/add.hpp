// Host model of add_f32: the residual add y = a + b over n floats (y may be a).
#pragma once
#include <cstdint>

namespace bitgate::ref {

void add_f32(const float* a, const float* b, float* y, int64_t n);

}  // namespace bitgate::ref
