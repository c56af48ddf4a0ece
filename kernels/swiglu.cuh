// swiglu: swiglu_f32 and the fused swiglu_quant_f32_t (which also writes the quantize_pad40_t
// planes of out). out = (g / (1 + exp_det(-g))) * u, exp_det from bitgate/exp.hpp.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

// One launch; f a multiple of 4, g/u/out 16-byte aligned.
void swiglu_f32(const float* g, const float* u, float* out, int64_t n, int64_t f, cudaStream_t stream);

// One launch; f a multiple of 32. Writes out [n][f] and every byte of qs and sda.
void swiglu_quant_f32_t(const float* g, const float* u, float* out, int64_t n, int64_t f, uint8_t* qs,
                        uint32_t* sda, cudaStream_t stream);

}  // namespace bitgate::cuda
