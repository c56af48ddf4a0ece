// The quantize_pad40_t activation plane as mmq_q8_0 reads it (DESIGN, "quantize_pad40_t"):
//   qs  [ntb][nchunk][2048] bytes: token r in [0, 64) of a token block, 32-bit word u in [0, 8)
//       of its 32 quantized bytes at (r>>2)*128 + ((((r&3)*2 + (u>>2)) ^ ((r>>2)&7)) << 4) + (u&3)*4
//   sda [ntb][nchunk][64] uint32: f16 bits of d | uint16(ssum) << 16
// Private to mmq until the producer's pad40.hpp is on this branch.
#pragma once
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate::mmq {

constexpr int kTokensPerBlock = 64;
constexpr int kTileBytes = 2048;  // one (token block, chunk) tile of qs

BITGATE_HD uint32_t plane_word_offset(uint32_t r, uint32_t u) {
    return (r >> 2) * 128 + ((((r & 3) * 2 + (u >> 2)) ^ ((r >> 2) & 7)) << 4) + (u & 3) * 4;
}

}  // namespace bitgate::mmq
