// Host model of quantize_q8_0: one activation row of k floats -> k/32 Q8_0 blocks.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::ref {

// ggml's reference quantizer: amax = max |x| over the block, d = amax / 127, id = d ? 1/d : 0,
// q = roundf(x * id), stored d = f16(d) rounded to nearest even.
void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t k);

}  // namespace bitgate::ref
