// Host models of swiglu: swiglu_f32 and the fused swiglu_quant_f32_t, which also writes the
// quantize_pad40_t planes of its output.
#pragma once
#include <cstdint>

namespace bitgate::ref {

// out = (g / (1 + exp_det(-g))) * u: exp_det from bitgate/exp.hpp, IEEE division.
float swiglu_value(float g, float u);

// out[t][i] for the [n][f] gate and up projections; f a multiple of 4.
void swiglu_f32(const float* g, const float* u, float* out, int64_t n, int64_t f);

// out as swiglu_f32, and qs/sda exactly as quantize_pad40_t(out), tokens n .. 64-padded zeros.
// f a multiple of 32.
void swiglu_quant_f32_t(const float* g, const float* u, float* out, int64_t n, int64_t f, uint8_t* qs,
                        uint32_t* sda);

}  // namespace bitgate::ref
