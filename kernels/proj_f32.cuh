// proj_f32: decode projection GEMV with f32 weights, y[n] = W[n][k] x.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

// One launch; k must be a multiple of 4. float4 loads where w and x are 16-byte aligned.
void proj_f32(const float* w, const float* x, float* y, int64_t n, int64_t k, cudaStream_t stream);

}  // namespace bitgate::cuda
