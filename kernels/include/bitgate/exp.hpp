// exp_det: a deterministic expf for bit-exact kernels (SiLU), identical on host and device.
//
// Built only from operations with one IEEE result: fmaf, *, -, comparisons and integer bit
// operations. No libm, no MUFU approximation, so host and device round identically.
// Accuracy against exp in double over all 2^32 inputs: docs/exp.md (tests/exp_test.cpp proves it,
// tests/exp_test.cpp proves host == device over the same 2^32 inputs).
//
//   x = k ln2 + r, k = rint(x log2 e) by the 1.5 * 2^23 magic add (ties to even, inside one fmaf),
//   r by Cody-Waite with a two-part ln2 (the first fmaf is exact, see below),
//   e^r = (1 + r) + (r^2 q(r) + rounding corrections), q the Taylor polynomial of
//   (e^r - 1 - r)/r^2 to degree 6 in Horner form, the head added last (one full-weight rounding),
//   2^k applied as two exact powers of two, so that the only rounding of the scaling is the last
//   multiply: overflow to inf, gradual underflow and zero come out of IEEE multiplication itself.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bitgate/hd.hpp"

// On the host, exp_det is forced inline so that a caller built for FMA hardware (a target clone,
// refimpl/fma_clones.hpp) turns its fmaf calls into the instruction; same bits, 4x faster.
#if defined(__CUDACC__) || !defined(__GNUC__)
#define BITGATE_EXP_HD BITGATE_HD
#else
#define BITGATE_EXP_HD inline __attribute__((always_inline))
#endif

namespace bitgate {

namespace exp_detail {

BITGATE_EXP_HD uint32_t bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
#endif
}

BITGATE_EXP_HD float from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, 4);
    return f;
#endif
}

// 2^e for e in [-126, 127], from the exponent field.
BITGATE_EXP_HD float pow2(int e) { return from_bits(uint32_t(e + 127) << 23); }

}  // namespace exp_detail

namespace exp_detail {

constexpr float kMagic = 12582912.0f;           // 1.5 * 2^23: adding it rounds to an integer

// x = k ln2 + r and e^r, for x already clamped to [-104, 89]. Shared by exp_det and
// exp_det_nonpos, which differ only in how they apply 2^k. (The operations keep exp_det's
// earlier order, k right after the magic sum: the device compiler then schedules exp_det's
// callers as before.)
struct Reduced {
    float e;  // e^r in [0.70, 1.42]
    int k;    // rint(x log2 e), in [-150, 128]
};

BITGATE_EXP_HD Reduced reduce(float x) {
    constexpr float kLog2e = 0x1.715476p+0f;     // log2 e, rounded
    constexpr float kLn2Hi = 0x1.62e430p-1f;     // ln 2, rounded
    constexpr float kLn2Lo = -0x1.05c610p-29f;   // ln 2 - kLn2Hi, rounded
    const float t = fmaf(x, kLog2e, kMagic);        // kMagic + rint(x log2 e), one rounding
    const float kf = t - kMagic;                    // exact
    const int k = int(bits(t) - bits(kMagic));      // the same integer, from the significand

    // r1 = x - k*kLn2Hi is exact: |r1| < 0.35 and both terms are multiples of 2^-24 * ulp(x)'s
    // scale. r = r1 - k*kLn2Lo rounds; dr recovers that rounding (to far below ulp(e^r) / 2^20).
    const float r1 = fmaf(kf, -kLn2Hi, x);
    const float r = fmaf(kf, -kLn2Lo, r1);
    const float dr = fmaf(kf, -kLn2Lo, r1 - r);

    // e^(r + dr) = s + lo with s = 1 + r rounded and everything else in a small correction:
    // err, the exact rounding error of s (Fast2Sum: |1| >= |r|), then dr, then r^2 q(r) with
    // q(r) = 1/2 + r/6 + ... + r^6/40320 in Horner form (the truncated r^9/9! is below 0.01 ulp).
    // Only the last addition rounds at full weight.
    float q = 0x1.a01a02p-16f;        // 1/40320
    q = fmaf(q, r, 0x1.a01a02p-13f);  // 1/5040
    q = fmaf(q, r, 0x1.6c16c2p-10f);  // 1/720
    q = fmaf(q, r, 0x1.111112p-7f);   // 1/120
    q = fmaf(q, r, 0x1.555556p-5f);   // 1/24
    q = fmaf(q, r, 0x1.555556p-3f);   // 1/6
    q = fmaf(q, r, 0.5f);
    const float s = 1.0f + r;
    const float err = (1.0f - s) + r;
    const float lo = fmaf(r * r, q, dr + err);     // dr + err is exact to 2^-48
    return {s + lo, k};
}

}  // namespace exp_detail

BITGATE_EXP_HD float exp_det(float x) {
    using namespace exp_detail;
    const uint32_t ix = bits(x);
    // NaN: quieted with its sign and payload kept, by a bit operation (an arithmetic op would
    // return the device's canonical NaN on one side and the input payload on the other). Chosen
    // by a select at the end, not an early return: without the branch the device compiler
    // interleaves a thread's independent calls (decode attention's 14 scores a thread: its split
    // kernel 2-12% faster, bench/RESULTS.md 2026-12-04, sixth). The arithmetic below on a NaN is
    // defined (C++20: the unsigned-to-int conversion and the shift are modular) and discarded.
    const bool nan = (ix & 0x7fffffffu) > 0x7f800000u;

    // Below -104, exp(x) < 2^-150 rounds to zero; above 89 it overflows. Clamping keeps k in
    // [-150, 128] (inf clamps too) and lets the final multiply produce the 0 and the inf.
    x = x < -104.0f ? -104.0f : x;
    x = x > 89.0f ? 89.0f : x;
    const Reduced red = reduce(x);
    const int k = red.k;

    // 2^k = 2^k1 * 2^k2 with both halves normal; e * 2^k1 is exact, the second product rounds once.
    const int k1 = k >> 1;                          // floor(k / 2), in [-75, 64]
    const int k2 = k - k1;                          // in [-75, 64]
    const float y = (red.e * pow2(k1)) * pow2(k2);
    return nan ? from_bits(ix | 0x00400000u) : y;
}

// exp_det's bits for every x <= 0 (+0 and -0 included), in fewer operations, for softmax's
// exp(s - max), whose arguments are never positive. With k in [-150, 0], 2^(k+64) is normal, so
// e * 2^(k+64) is exact and the one rounding is the multiply by 2^-64, as in exp_det, where
// e * 2^k1 is exact and the multiply by 2^k2 rounds. No upper clamp; no NaN select: a NaN
// argument gives an unspecified NaN (a kernel whose NaN bits the contract leaves open may use it).
// tests/exp_test.cpp compares it with exp_det on all 2^31 + 2^23 arguments <= 0 or NaN.
BITGATE_EXP_HD float exp_det_nonpos(float x) {
    using namespace exp_detail;
    x = x < -104.0f ? -104.0f : x;                  // a NaN passes (the comparison is false)
    const Reduced red = reduce(x);
    // k + 64 + 127 in the exponent field.
    const float p = from_bits((uint32_t(red.k) + 191u) << 23);
    return (red.e * p) * 0x1p-64f;
}

}  // namespace bitgate
