// The defective add launcher behind mutants/add.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// As cuda::add_f32 without the scalar tail: the last n % 4 values are never written. Returns the
// launches made (none when n < 4).
int add_f32_no_tail(const float* a, const float* b, float* y, int64_t n, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
