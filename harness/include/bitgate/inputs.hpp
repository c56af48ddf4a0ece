// Deterministic inputs. Every value is a pure function of (seed, tensor name, element index):
// integer hashing and exact IEEE operations only (no libm, no <random>), so the bytes, and the
// golden digests computed from them, are the same on every machine, compiler and thread count,
// and any subset of a tensor can be regenerated on its own.
#pragma once

#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/spec.hpp"

namespace bitgate::inputs {

inline uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline uint64_t name_hash(std::string_view s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// The stream of one tensor: bits(i) is its i-th 64-bit draw; lane selects an independent draw
// for the same element (a value and a decision about it, say).
struct Stream {
    uint64_t key;
    Stream(const GenRequest& r, std::string_view salt = {})
        : key(mix64(r.seed ^ mix64(name_hash(r.tensor) ^ name_hash(salt)))) {}
    uint64_t bits(uint64_t i, uint64_t lane = 0) const { return mix64(key ^ mix64(i * 4 + lane)); }
    // Uniform in [-1, 1): 24 random bits times an exact power of two.
    float uniform(uint64_t i, uint64_t lane = 0) const {
        return static_cast<float>(static_cast<int32_t>(bits(i, lane) >> 40) - (1 << 23)) * 0x1p-23f;
    }
};

// The f32 profiles (DESIGN "Inputs and profiles"). `row` is the length of a row (the channel
// count), so `outliers` can pick channels and `ties`/`zeros` can act on 32-value blocks.
// `nonfinite` mixes NaN (several payloads, quiet and signalling, either sign) and +-inf into
// finite data; no family runs it unless a catalog line or a property names it.
inline constexpr std::string_view f32_profiles[] = {
    "uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero", "nonfinite"};

// The NaNs `nonfinite` draws: the quiet NaN CUDA and x86 produce (0x7fffffff, 0x7fc00000), x86's
// default NaN (negative), quiet and signalling NaNs with payloads.
inline constexpr uint32_t nonfinite_nans[] = {0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0x7fc00001u,
                                              0x7f800001u, 0x7fbfffffu, 0xff812345u};

inline bool is_f32_profile(std::string_view p) {
    for (auto q : f32_profiles)
        if (q == p) return true;
    return false;
}

inline float f32_value(const Stream& s, std::string_view profile, uint64_t i, uint64_t row) {
    const uint64_t col = row ? i % row : i;
    const uint64_t block = i / 32;  // 32-value blocks, as every quantizer here uses
    if (profile == "normal") {      // Irwin-Hall(4), rescaled to unit variance: exact + and *
        const float a = s.uniform(i, 0), b = s.uniform(i, 1), c = s.uniform(i, 2), d = s.uniform(i, 3);
        return ((a + b) + (c + d)) * 0.8660254f;
    }
    if (profile == "outliers") {  // about 1 channel in 64 is 100x larger
        const float v = s.uniform(i);
        return (s.bits(col, 3) % 64 == 0) ? v * 100.0f : v;
    }
    if (profile == "ties") {
        // In each 32-value block one value is +-127 * 2^e and the others are (k + 0.5) * 2^e, so
        // that x * (1 / (amax / 127)) lands exactly on k + 0.5: rintf and roundf disagree there.
        const int e = static_cast<int>(s.bits(block, 1) % 9) - 4;
        float scale = 1.0f;
        for (int j = 0; j < (e < 0 ? -e : e); ++j) scale = e < 0 ? scale * 0.5f : scale * 2.0f;
        const uint64_t pivot = s.bits(block, 2) % 32;
        const bool neg = s.bits(i, 3) & 1;
        float v;
        if (i % 32 == pivot) v = 127.0f;
        else v = static_cast<float>(static_cast<int>(s.bits(i) % 127)) + 0.5f;  // 0.5 .. 126.5
        return (neg ? -v : v) * scale;
    }
    if (profile == "zeros") {  // half the blocks all zero: the d = 0 path
        return (s.bits(block, 1) & 1) ? 0.0f : s.uniform(i);
    }
    if (profile == "tiny") {  // subnormals and the smallest normals
        const uint64_t b = s.bits(i);
        const uint32_t exp = (b >> 40) % 4;  // biased exponent 0 (subnormal) .. 3
        return f32_from_bits(static_cast<uint32_t>((b >> 63) << 31) | (exp << 23) |
                             static_cast<uint32_t>(b & 0x7fffffu));
    }
    if (profile == "signed_zero") {  // +0, -0, and whole blocks of signed zeros
        const uint64_t b = s.bits(i, 1);
        if ((s.bits(block, 2) & 3) == 0 || (b & 3) == 0) return (b & 4) ? -0.0f : 0.0f;
        return s.uniform(i);
    }
    if (profile == "nonfinite") {
        // Half the rows (never the first) stay finite. In the others each 32-value block is finite,
        // holds one NaN (at the last position a quarter of the time), one +-inf, or one non-finite
        // value in eight.
        const uint64_t r = row ? i / row : 0;
        const float v = s.uniform(i);
        if (r != 0 && (s.bits(r, 4) & 1) == 0) return v;
        const uint64_t kind = s.bits(block, 1) % 4, pos = i % 32;
        const uint64_t at = (s.bits(block, 3) % 4 == 0) ? 31 : s.bits(block, 2) % 32;
        const uint64_t pick = s.bits(i, 2);
        const float nan = f32_from_bits(nonfinite_nans[pick % std::size(nonfinite_nans)]);
        const float inf = f32_from_bits((pick & 8) ? 0xff800000u : 0x7f800000u);
        if (kind == 1) return pos == at ? nan : v;
        if (kind == 2) return pos == at ? inf : v;
        if (kind == 3 && pick % 8 == 0) return (pick & 16) ? nan : inf;
        return v;
    }
    return s.uniform(i);  // "uniform", and the default
}

inline void fill_f32(std::span<uint8_t> out, const GenRequest& r, uint64_t row) {
    const Stream s(r);
    const size_t n = out.size() / 4;
    for (size_t i = 0; i < n; ++i) {
        const float v = f32_value(s, r.profile, i, row);
        std::memcpy(out.data() + i * 4, &v, 4);
    }
}

// Q8_0 blocks as weights are stored: quantized bytes in [-127, 127] (and -128 now and then, which
// a file may hold) with a positive f16 scale near what real weights carry. Profile "raw_q8"
// draws arbitrary finite f16 scales instead (any sign, subnormals, up to 65504); "zeros" makes
// every fourth block all zero with d = 0.
inline void fill_q8_0(std::span<uint8_t> out, const GenRequest& r) {
    const Stream s(r, "q8_0");
    const size_t nb = out.size() / sizeof(BlockQ8_0);
    for (size_t b = 0; b < nb; ++b) {
        BlockQ8_0 blk;
        const uint64_t h = s.bits(b, 1);
        const bool zero = r.profile == "zeros" && h % 4 == 0;
        if (r.profile == "raw_q8") {
            uint16_t d = static_cast<uint16_t>(s.bits(b, 2) >> 48);
            if ((d & 0x7c00u) == 0x7c00u) d &= 0xfbffu;  // inf/NaN -> the finite value below it
            blk.d = d;
        } else {
            // d in [2^-10, 2^-6): 1 + 10 random mantissa bits times a power of two.
            blk.d = zero ? 0 : static_cast<uint16_t>(((5 + h % 4) << 10) | ((h >> 8) & 0x3ffu));
        }
        for (int j = 0; j < QK8_0; ++j) {
            const uint64_t q = s.bits(b * QK8_0 + j);
            int v = static_cast<int>(q % 255) - 127;
            if ((q >> 32) % 1024 == 0) v = -128;
            blk.qs[j] = zero ? 0 : static_cast<int8_t>(v);
        }
        std::memcpy(out.data() + b * sizeof(BlockQ8_0), &blk, sizeof(BlockQ8_0));
    }
}

// The common f32 input: `rows` x `cols` (dimension names; rows "" for a single row), its profile
// applied with `cols` as the channel count.
inline TensorSpec f32_input(std::string name, std::string rows, std::string cols) {
    return TensorSpec{.name = std::move(name), .role = Role::input, .elem = Elem::f32,
                      .bytes = [rows, cols](const Shape& s) { return size_t(rows.empty() ? 1 : s[rows]) * size_t(s[cols]) * 4; },
                      .generate = [cols](const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
                          fill_f32(out, r, uint64_t(s[cols]));
                      },
                      .dims = [rows, cols](const Shape& s) {
                          return rows.empty() ? std::vector<int64_t>{s[cols]} : std::vector<int64_t>{s[rows], s[cols]};
                      }};
}

}  // namespace bitgate::inputs
