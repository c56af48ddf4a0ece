// swiglu_q8_0: out = swiglu_f32(g, u) over [n][f] and xq = quantize_q8_0 of each row of out
// ([n][f/32] Q8_0 blocks), in one launch: decode's SwiGLU and the quantization the down
// projection reads. f a multiple of 32.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

void swiglu_q8_0(const float* g, const float* u, float* out, BlockQ8_0* xq, int64_t n, int64_t f,
                 cudaStream_t stream);

}  // namespace bitgate::cuda
