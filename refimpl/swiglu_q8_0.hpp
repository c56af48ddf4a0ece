// swiglu_q8_0: decode's SwiGLU and the quantization the down projection reads, as one family.
// Its bytes are defined as swiglu_f32 followed by quantize_q8_0 of each row of the result; the
// fused kernel must give exactly those (the family's claim).
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::ref {

// g, u, out [n][f] f32, xq [n][f/32]; f a multiple of 32.
void swiglu_q8_0(const float* g, const float* u, float* out, BlockQ8_0* xq, int64_t n, int64_t f);

}  // namespace bitgate::ref
