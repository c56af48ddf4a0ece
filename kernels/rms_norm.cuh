// rms_norm: rms_norm_f32 and the fused rms_norm_quant_f32_t (which also writes the
// quantize_pad40_t planes of y). eps = 1e-6f (refimpl/rms_norm.hpp: kRmsEps).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

// One launch; d a multiple of 4, x/w/y 16-byte aligned.
void rms_norm_f32(const float* x, const float* w, float* y, int64_t n, int64_t d, cudaStream_t stream);

// One launch; d a multiple of 32. Writes y [n][d] and every byte of qs and sda.
void rms_norm_quant_f32_t(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs,
                          uint32_t* sda, cudaStream_t stream);

}  // namespace bitgate::cuda
