// Host model of quantize_pad40_t: activation [n][d] f32 -> the swizzled, padded int8 plane
// (layout: kernels/include/bitgate/pad40.hpp).
#pragma once
#include <cstdint>

namespace bitgate::ref {

// One 32-value chunk: am = serial max |e|, d = am / 127, di = d != 0 ? 1/d : 0,
// q = clamp(rintf(e * di), -128, 127). Writes q[0..32) and returns the sda word
// (f16 bits of d | int16 ssum << 16).
uint32_t pad40_quantize_chunk(const float* e, int8_t* q);

// Stores one quantized chunk of token t (absolute token index) into both planes.
void pad40_store_chunk(uint8_t* qs, uint32_t* sda, int64_t t, int64_t c, int64_t nchunk, const int8_t* q,
                       uint32_t sda_word);

// Writes every byte of qs (pad40_qs_bytes(n, d)) and sda (pad40_sda_bytes(n, d)); tokens
// t >= n inside the last token block are zeros. d must be a multiple of 32.
void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda);

}  // namespace bitgate::ref
