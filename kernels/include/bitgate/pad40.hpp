// The quantize_pad40_t plane: the activation operand of the prefill int8 GEMM (mmq_q8_0).
//
// An activation [n tokens][d features] f32 is cut into token blocks of 64 (ntb = ceil(n/64)) and
// chunks of 32 features (nchunk = d/32). Each (token block, chunk) pair is one tile:
//   qs : [ntb][nchunk][2048] bytes: the 64 tokens' 32 quantized int8 values, swizzled (below);
//   sda: [ntb][nchunk][64] uint32 : per token, f16 bits of the scale d | uint16(ssum) << 16.
// Tokens t >= n inside the last token block are zeros in both planes. Producers (the standalone
// quantizer, the fused norm and SwiGLU) and the consumer (the GEMM) address the plane through
// these functions only, so there is one definition of the layout.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate {

constexpr int kPad40Tokens = 64;        // tokens per token block: the GEMM's n tile
constexpr int kPad40Chunk = 32;         // features per chunk: one Q8_0 block of K
constexpr int kPad40Words = 8;          // 32-bit words of quantized bytes per (token, chunk)
constexpr int kPad40TileBytes = 2048;   // qs bytes per tile: 64 tokens x 32 bytes
constexpr int kPad40TileSda = 64;       // sda words per tile: one per token

BITGATE_HD int64_t pad40_ntb(int64_t n) { return (n + kPad40Tokens - 1) / kPad40Tokens; }
BITGATE_HD int64_t pad40_nchunk(int64_t d) { return d / kPad40Chunk; }
// The token count the planes (and the fused kernels' grids) cover: n rounded up to 64.
BITGATE_HD int64_t pad40_tokens(int64_t n) { return pad40_ntb(n) * kPad40Tokens; }

inline size_t pad40_qs_bytes(int64_t n, int64_t d) {
    return size_t(pad40_ntb(n)) * size_t(pad40_nchunk(d)) * kPad40TileBytes;
}
inline size_t pad40_sda_bytes(int64_t n, int64_t d) {
    return size_t(pad40_ntb(n)) * size_t(pad40_nchunk(d)) * kPad40TileSda * sizeof(uint32_t);
}

// Byte offset, inside one 2048-byte tile, of 32-bit word u in [0, 8) of token r in [0, 64).
// Word u holds quantized values 4u .. 4u+3 of the chunk (byte j of the word is value 4u + j).
// Four tokens share a 128-byte row of eight 16-byte segments; segment (r&3)*2 + (u>>2) is
// xor-swizzled by the row index so that the GEMM's ldmatrix-style reads of one segment column
// across 8 rows hit 8 different bank groups. A token's two segments are 2j and 2j+1 before the
// swizzle, and xor keeps them in one aligned 32-byte sector after it.
BITGATE_HD uint32_t pad40_qs_offset(uint32_t r, uint32_t u) {
    return (r >> 2) * 128u + (((((r & 3u) * 2u + (u >> 2)) ^ ((r >> 2) & 7u))) << 4) + (u & 3u) * 4u;
}

// Index of the tile (token block tb, chunk c): qs bytes start at tile * 2048, sda words at tile * 64.
BITGATE_HD int64_t pad40_tile(int64_t tb, int64_t c, int64_t nchunk) { return tb * nchunk + c; }

// Byte offset in qs of word u of chunk c of token t (t may be a padded token < pad40_tokens(n)).
BITGATE_HD int64_t pad40_qs_at(int64_t t, int64_t c, uint32_t u, int64_t nchunk) {
    return pad40_tile(t / kPad40Tokens, c, nchunk) * kPad40TileBytes +
           pad40_qs_offset(uint32_t(t % kPad40Tokens), u);
}
// Index (in uint32 words) in sda of chunk c of token t.
BITGATE_HD int64_t pad40_sda_at(int64_t t, int64_t c, int64_t nchunk) {
    return pad40_tile(t / kPad40Tokens, c, nchunk) * kPad40TileSda + t % kPad40Tokens;
}

// One sda word: the f16 bits of the scale in the low half, the int16 sum of the 32 quantized
// values (|ssum| <= 4096, always representable) in the high half.
BITGATE_HD uint32_t pad40_sda_word(uint16_t d_f16, int32_t ssum) {
    return uint32_t(d_f16) | (uint32_t(uint16_t(int16_t(ssum))) << 16);
}
BITGATE_HD uint16_t pad40_sda_d(uint32_t w) { return uint16_t(w & 0xffffu); }
BITGATE_HD int32_t pad40_sda_ssum(uint32_t w) { return int32_t(int16_t(uint16_t(w >> 16))); }

// The inverse of pad40_qs_offset, for decoding a byte offset in reports: token r, word u, byte j.
struct Pad40Where {
    uint32_t r, u, j;
};
BITGATE_HD Pad40Where pad40_qs_where(uint32_t off) {
    const uint32_t row = off / 128u, seg = ((off % 128u) / 16u) ^ (row & 7u);
    return {row * 4u + seg / 2u, (seg & 1u) * 4u + (off % 16u) / 4u, off % 4u};
}

// Quantized value of a scaled element: rintf (ties to even) clamped to [-128, 127]. The clamp is
// done in float, so it is defined for every input: +-inf (1/d overflowed for a subnormal chunk
// maximum) clamps, NaN (0 * inf) stores 0, exactly what the device's saturating conversion does.
BITGATE_HD int8_t pad40_round(float v) {
    if (!(v == v)) return 0;
    const float q = rintf(v);
    if (q >= 127.0f) return 127;
    if (q <= -128.0f) return -128;
    return int8_t(int(q));
}

}  // namespace bitgate
