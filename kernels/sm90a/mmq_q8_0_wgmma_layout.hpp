// How the Hopper variant of mmq_q8_0 (kernels/sm90a/mmq_q8_0_wgmma.cu) hands shared memory to
// wgmma, as plain functions so that the host suite can check the layout argument byte for byte.
//
// wgmma reads a K-major operand in the 32-byte swizzle mode (descriptor mode 3) as rows of 32
// bytes: row m, byte k (k < 32: one k32 step, k in its natural order) lives at
//     sw32(32 * m + k),     sw32(L) = L ^ (((L >> 7) & 1) << 4)
// when the 8-row groups are 256 bytes apart (stride byte offset 256) and the tile is 256-byte
// aligned. The quantize_pad40_t tile (bitgate/pad40.hpp) is the row-major 64 x 32-byte matrix
// with the 128-byte swizzle applied (bits 4..6 ^= bits 7..9). The two agree on every bit except
// bits 5..6, so wgmma row m holds token pad40_row_token(m) = m ^ ((m >> 3) & 3) of the block,
// with every byte k in place: the activation tile is a wgmma operand as it lies in memory, and
// the only price is a token permutation in the epilogue's bookkeeping. The weights are repacked
// into the same 32-byte-swizzle layout with k in its natural order, so both operands meet k in
// the same order inside a chunk.
#pragma once
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate::wgmma_layout {

// The 32-byte swizzle: 16-byte halves of a 32-byte row swap in rows 4..7 of each 8-row group.
BITGATE_HD uint32_t sw32(uint32_t logical) { return logical ^ (((logical >> 7) & 1u) << 4); }

// Byte offset of (row m, byte k) of a K-major operand tile in the 32-byte swizzle mode.
BITGATE_HD uint32_t sw32_at(uint32_t m, uint32_t k) { return sw32(32u * m + k); }

// The token of a pad40 block that wgmma row m reads (an involution on 0..63).
BITGATE_HD uint32_t pad40_row_token(uint32_t m) { return m ^ ((m >> 3) & 3u); }

// Where the epilogue finds the weight-row scale of row rr (< 128) of a chunk: fragment order, so
// that a thread (lane t of its quad) reads rows 16p + 2t, +1, 16p + 8 + 2t, +1 as one float4.
BITGATE_HD uint32_t dw_slot(uint32_t rr) {
    const uint32_t p = rr / 16, in = rr % 16;
    return (p * 4 + (in % 8) / 2) * 4 + (in / 8) * 2 + in % 2;
}

}  // namespace bitgate::wgmma_layout
