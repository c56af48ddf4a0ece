// quantize_pad40_t: prefill activation [n][d] f32 -> the int8 plane of the prefill GEMM
// (layout: bitgate/pad40.hpp).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

// One launch. d a multiple of 32; qs and sda sized pad40_qs_bytes / pad40_sda_bytes (n, d), every
// byte written (tokens n .. 64-padded as zeros). qs and x 16-byte aligned.
void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream);

}  // namespace bitgate::cuda
