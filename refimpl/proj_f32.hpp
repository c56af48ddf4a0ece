// Host model of proj_f32: y[n] = W[n][k] x with f32 weights (no quantization).
//
// Float order: one warp per row; lane l takes float4 groups l, l+32, ... of the row in ascending
// order and for each does acc = fmaf(w.x, x.x, acc), then .y, .z, .w (acc starts at +0.0f); then
// the warp xor tree 16, 8, 4, 2, 1 (every lane: v = v + shfl_xor(v, off)) and lane 0's value is y.
#pragma once
#include <cstdint>

namespace bitgate::ref {

// k must be a multiple of 4.
void proj_f32(const float* w, const float* x, float* y, int64_t n, int64_t k);

}  // namespace bitgate::ref
