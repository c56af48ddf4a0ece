// Host models of rms_norm: rms_norm_f32 and the fused rms_norm_quant_f32_t, which also writes the
// quantize_pad40_t planes of its output.
#pragma once
#include <cstdint>

namespace bitgate::ref {

// The family's epsilon: scale = 1 / sqrtf(ss / d + eps).
constexpr float kRmsEps = 1e-6f;

// The kernel's order: lane l (of 32) sums the squares of float4 groups l, l+32, ... in order,
// x, y, z, w each as acc = acc + v*v; then the warp xor tree over offsets 16, 8, 4, 2, 1;
// then 1.0f / sqrtf(ss / d + eps), IEEE division and square root.
float rms_norm_scale(const float* x, int64_t d);

// y[t][i] = (x[t][i] * scale_t) * w[i]; d a multiple of 4.
void rms_norm_f32(const float* x, const float* w, float* y, int64_t n, int64_t d);

// y as rms_norm_f32, and qs/sda exactly as quantize_pad40_t(y): the quantized chunks are taken
// from the values as they are computed, tokens n .. 64-padded are zeros. d a multiple of 32.
void rms_norm_quant_f32_t(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs,
                          uint32_t* sda);

}  // namespace bitgate::ref
