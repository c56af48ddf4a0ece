// rms_norm_q8_0: the decode step's norm and the quantization its projections read, as one
// family. Its bytes are defined as rms_norm_f32 of each row followed by quantize_q8_0 of the
// row's result; the fused kernel must give exactly those (the family's claim).
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::ref {

// x, y [n][d] f32, w [d], xq [n][d/32]; d a multiple of 32.
void rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d);

}  // namespace bitgate::ref
