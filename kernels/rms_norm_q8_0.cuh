// rms_norm_q8_0: y = rms_norm_f32(x, w) over [n][d] rows (eps 1e-6) and xq = quantize_q8_0 of
// each row of y ([n][d/32] Q8_0 blocks), in one launch: the decode step's norm and the
// quantization its projections read. d a multiple of 32; x, w and y 16-byte aligned.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

void rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d,
                   cudaStream_t stream);

}  // namespace bitgate::cuda
