// 32-bit words out of Q8_0 blocks, and the int8 dot product on them; one definition for the host
// models and the kernels, so the host proves what the device runs.
//
// A BlockQ8_0 is 34 bytes with alignment 2: in a stream of blocks, qs starts at 2 mod 4 for every
// other block, so a 32-bit load of a qs word is misaligned half of the time. get_int_b2 rebuilds
// the word from two aligned 16-bit loads; q8_0_block_words rebuilds a whole block from aligned
// 32-bit words of a 4-aligned copy (the kernels' shared-memory staging buffers).
#pragma once
#include <cstdint>
#include <cstring>

#include "bitgate/formats.hpp"
#include "bitgate/hd.hpp"

namespace bitgate {

// Word i (bytes 4i .. 4i+3, little-endian) of a 2-byte-aligned byte array.
BITGATE_HD int32_t get_int_b2(const void* p, int i) {
#if defined(__CUDA_ARCH__)
    const uint16_t* p16 = static_cast<const uint16_t*>(p);
    return int32_t(uint32_t(p16[2 * i]) | (uint32_t(p16[2 * i + 1]) << 16));
#else
    uint16_t lo, hi;  // memcpy: the host has strict aliasing; the loads are still 16-bit
    std::memcpy(&lo, static_cast<const uint8_t*>(p) + 4 * i, 2);
    std::memcpy(&hi, static_cast<const uint8_t*>(p) + 4 * i + 2, 2);
    return int32_t(uint32_t(lo) | (uint32_t(hi) << 16));
#endif
}

// __dp4a(a, b, c): c plus the four signed-byte products of a and b, wrapping at 32 bits.
BITGATE_HD int32_t dp4a(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__)
    return __dp4a(a, b, c);
#else
    uint32_t acc = uint32_t(c);
    for (int i = 0; i < 4; ++i) {
        const int32_t ai = int8_t(uint8_t(uint32_t(a) >> (8 * i)));
        const int32_t bi = int8_t(uint8_t(uint32_t(b) >> (8 * i)));
        acc += uint32_t(ai * bi);
    }
    return int32_t(acc);
#endif
}

// __funnelshift_rc(lo, hi, s): the low word of (hi:lo) >> min(s, 32).
BITGATE_HD uint32_t funnelshift_rc(uint32_t lo, uint32_t hi, uint32_t s) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_rc(lo, hi, s);
#else
    const uint64_t v = (uint64_t(hi) << 32) | lo;
    return uint32_t(v >> (s < 32 ? s : 32));
#endif
}

// The block that starts at byte `off` (even) of a 4-byte-aligned buffer, from the 9 aligned
// words that cover it: w[0] holds d (low half when off % 4 == 0, high half when 2); the qs words
// are w[j:j+1] >> 16 or w[j+1]. Reads bytes [off & ~3, (off & ~3) + 36): up to 2 bytes on
// either side of the block, so the buffer needs 2 bytes of slack after its last block.
struct Q8Words {
    uint16_t d;
    int32_t qs[QK8_0 / 4];
};

BITGATE_HD Q8Words q8_0_block_words(const uint32_t* buf, uint32_t off) {
    const uint32_t* w = buf + (off >> 2);
    const uint32_t s = (off & 2u) ? 32u : 16u;  // funnel shift that lands on the qs word
    Q8Words r;
    r.d = uint16_t(w[0] >> (s - 16u));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < QK8_0 / 4; ++j) r.qs[j] = int32_t(funnelshift_rc(w[j], w[j + 1], s));
    return r;
}

}  // namespace bitgate
