// IEEE binary16 conversions on the host, bit for bit those of the CUDA intrinsics:
// f32_to_f16_rn == __float2half_rn (round to nearest even, subnormals kept, NaN quieted to 0x7fff
// as the device does) and f16_to_f32 == __half2float (exact).
#pragma once
#include <cstdint>
#include <cstring>

namespace bitgate {

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline uint16_t f32_to_f16_rn(float f) {
    const uint32_t x = f32_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return 0x7fffu;                 // NaN: the device's canonical NaN
    if (ax >= 0x477ff000u) return sign | 0x7c00u;         // rounds to or beyond 65520: infinity
    if (ax >= 0x38800000u) {                              // normal half: exponent >= -14
        const uint32_t mant = ax & 0x7fffffu;
        const uint32_t exp = (ax >> 23) - 127 + 15;
        uint32_t h = (exp << 10) | (mant >> 13);
        const uint32_t rest = mant & 0x1fffu;             // the 13 bits rounded away
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carry may bump the exponent: still right
        return sign | static_cast<uint16_t>(h);
    }
    if (ax < 0x33000000u) return sign;                    // below half the smallest subnormal: zero
    // Subnormal half: value = m * 2^-24, m = round(ax_value * 2^24).
    const uint32_t exp = ax >> 23;                        // 102 .. 112
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;   // 24-bit significand
    const uint32_t shift = 126 - exp;                     // 14 .. 24: bits to drop
    uint32_t h = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
    return sign | static_cast<uint16_t>(h);
}

inline float f16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {  // subnormal half: normalise
        int e = -1;
        do { mant <<= 1; ++e; } while ((mant & 0x400u) == 0);
        bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | ((mant & 0x3ffu) << 13);
    }
    return f32_from_bits(bits);
}

}  // namespace bitgate
