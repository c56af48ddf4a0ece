// quantize_q8_0: one activation row of k floats -> k/32 Q8_0 blocks (ggml's bytes).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

// Enqueues one launch on `stream`. k must be a multiple of 32.
void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t k, cudaStream_t stream);

}  // namespace bitgate::cuda
