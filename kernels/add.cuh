// add: the residual add y = a + b over n f32 values (y may be a). One launch; a, b, y 16-byte
// aligned (any n: the last n % 4 values take a scalar path).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

void add_f32(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream);

}  // namespace bitgate::cuda
