// rope_table: the cos and sin of the NEOX rotary angle theta = pos * base^(-2i/head_dim), the same
// bits on the host and the device.
//
// Built only from operations with one IEEE result, in double precision: +, -, *, /, fma, integer
// bit operations. No libm, no MUFU approximation. The angle is formed in double so that the only
// rounding that matters is the last one, double -> float, of cos and sin: the float results are
// the correctly rounded values except within ~1e-10 of a rounding tie (docs/rope.md gives the
// bound, tests/rope_test.cpp measures it over every position 0..32767, tests/rope_device.cu
// proves host == device on the same grid).
//
//   ln(base)        exponent split, then 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.172, 12 terms
//   f = base^(-2i/d) = e^y, y = -(2i/d) ln(base): y = k ln2 + r (Cody-Waite, two-part ln2),
//                   e^r by Taylor to degree 13 (|r| <= 0.347), 2^k from the exponent field
//   theta = pos * f (one rounding)
//   theta = q pi/2 + r, q = rint(theta 2/pi), three-part pi/2 with fma (exact for q < 2^19)
//   sin r, cos r by Taylor to degree 17 and 16 (|r| <= pi/4), quadrant by q mod 4
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "bitgate/hd.hpp"

namespace bitgate {

namespace rope_detail {

BITGATE_HD uint64_t dbits(double x) {
#if defined(__CUDA_ARCH__)
    return uint64_t(__double_as_longlong(x));
#else
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
#endif
}

BITGATE_HD double dfrom(uint64_t u) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(u));
#else
    double x;
    std::memcpy(&x, &u, 8);
    return x;
#endif
}

BITGATE_HD double dfma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return std::fma(a, b, c);  // correctly rounded by definition (IEEE 754 fusedMultiplyAdd)
#endif
}

// 1.5 * 2^52: adding it to |x| < 2^51 rounds x to an integer (ties to even) in the low bits.
constexpr double kMagic = 6755399441055744.0;
// ln 2 in two parts (the head has 32 significant bits, so k * kLn2Hi is exact for |k| < 2^21).
constexpr double kLn2Hi = 0x1.62e42feep-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
// pi/2 in three parts: the first two have 33 significant bits, so q * part is exact for q < 2^20.
constexpr double kPio2_1 = 0x1.921fb544p+0;
constexpr double kPio2_2 = 0x1.0b4611a6p-34;
constexpr double kPio2_3 = 0x1.3198a2e037073p-69;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

// ln(b) for a finite b > 0 (a normal double).
BITGATE_HD double ln_det(double b) {
    const uint64_t u = dbits(b);
    int e = int((u >> 52) & 0x7ff) - 1023;
    double m = dfrom((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
    if (m > 1.4142135623730951) {  // m in (sqrt2/2, sqrt2]: |s| <= 0.1716
        m = m * 0.5;               // exact
        e = e + 1;
    }
    const double s = (m - 1.0) / (m + 1.0);  // m - 1 exact (Sterbenz), one rounded division
    const double s2 = s * s;
    // 2 atanh(s) = 2 (s + s^3/3 + ... + s^23/23); the next term is below 2^-60 relative.
    // Coefficients 1/(2k+1) as exact hex literals (no constant folding to trust).
    double p = 0x1.642c8590b2164p-5;      // 1/23
    p = dfma(p, s2, 0x1.8618618618618p-5);  // 1/21
    p = dfma(p, s2, 0x1.af286bca1af28p-5);  // 1/19
    p = dfma(p, s2, 0x1.e1e1e1e1e1e1ep-5);  // 1/17
    p = dfma(p, s2, 0x1.1111111111111p-4);  // 1/15
    p = dfma(p, s2, 0x1.3b13b13b13b14p-4);  // 1/13
    p = dfma(p, s2, 0x1.745d1745d1746p-4);  // 1/11
    p = dfma(p, s2, 0x1.c71c71c71c71cp-4);  // 1/9
    p = dfma(p, s2, 0x1.2492492492492p-3);  // 1/7
    p = dfma(p, s2, 0x1.999999999999ap-3);  // 1/5
    p = dfma(p, s2, 0x1.5555555555555p-2);  // 1/3
    const double atanh2 = dfma(s * s2, 2.0 * p, 2.0 * s);  // 2s + 2 s^3 p(s^2)
    return dfma(double(e), kLn2, atanh2);
}

// e^y for y in [-700, 0] (the frequencies: y = -(2i/d) ln(base) <= 0).
BITGATE_HD double exp_neg_det(double y) {
    const double t = dfma(y, kInvLn2, kMagic);
    const double kd = t - kMagic;                           // rint(y / ln2), exact
    const int k = int(int64_t(dbits(t) - dbits(kMagic)));  // the same integer
    double r = dfma(-kd, kLn2Hi, y);                        // exact: k kLn2Hi exact, result small
    r = dfma(-kd, kLn2Lo, r);                               // |r| <= 0.3466
    // Taylor to degree 13: the remainder is below 4e-18.
    double p = 0x1.6124613a86d09p-33;      // 1/13!
    p = dfma(p, r, 0x1.1eed8eff8d898p-29);  // 1/12!
    p = dfma(p, r, 0x1.ae64567f544e4p-26);  // 1/11!
    p = dfma(p, r, 0x1.27e4fb7789f5cp-22);  // 1/10!
    p = dfma(p, r, 0x1.71de3a556c734p-19);  // 1/9!
    p = dfma(p, r, 0x1.a01a01a01a01ap-16);  // 1/8!
    p = dfma(p, r, 0x1.a01a01a01a01ap-13);  // 1/7!
    p = dfma(p, r, 0x1.6c16c16c16c17p-10);  // 1/6!
    p = dfma(p, r, 0x1.1111111111111p-7);   // 1/5!
    p = dfma(p, r, 0x1.5555555555555p-5);   // 1/4!
    p = dfma(p, r, 0x1.5555555555555p-3);   // 1/3!
    p = dfma(p, r, 0.5);                    // 1/2!
    const double er = dfma(r * r, p, 1.0 + r);  // 1 + r + r^2 p(r)
    // 2^k, k in [-1010, 0]: a normal power of two, the multiply exact.
    return er * dfrom(uint64_t(k + 1023) << 52);
}

}  // namespace rope_detail

// The NEOX frequency of pair i of a head of head_dim values: base^(-2i/head_dim), in double.
BITGATE_HD double rope_freq(int64_t i, int64_t head_dim, float base) {
    using namespace rope_detail;
    const double y = -(double(2 * i) / double(head_dim)) * ln_det(double(base));
    return exp_neg_det(y);
}

// cos and sin of theta = pos * freq, rounded once to float each. Valid for 0 <= theta < 2^19.
BITGATE_HD void rope_cos_sin_freq(int32_t pos, double freq, float* c, float* s) {
    using namespace rope_detail;
    const double theta = double(pos) * freq;
    const double t = dfma(theta, kTwoOverPi, kMagic);
    const double qd = t - kMagic;
    const uint32_t q = uint32_t(dbits(t) - dbits(kMagic));
    double r = dfma(-qd, kPio2_1, theta);  // exact: q kPio2_1 exact, the difference fits
    r = dfma(-qd, kPio2_2, r);
    r = dfma(-qd, kPio2_3, r);             // |r| <= pi/4 + tiny
    const double r2 = r * r;
    // sin r = r - r^3 (1/3! - r^2/5! + r^4/7! - ... - r^14/17!), remainder below 1e-19.
    double ps = -0x1.952c77030ad4ap-49;       // -1/17!
    ps = dfma(ps, r2, 0x1.ae7f3e733b81fp-41);   // 1/15!
    ps = dfma(ps, r2, -0x1.6124613a86d09p-33);  // -1/13!
    ps = dfma(ps, r2, 0x1.ae64567f544e4p-26);   // 1/11!
    ps = dfma(ps, r2, -0x1.71de3a556c734p-19);  // -1/9!
    ps = dfma(ps, r2, 0x1.a01a01a01a01ap-13);   // 1/7!
    ps = dfma(ps, r2, -0x1.1111111111111p-7);   // -1/5!
    ps = dfma(ps, r2, 0x1.5555555555555p-3);    // 1/3!
    const double sr = dfma(-(r * r2), ps, r);
    // cos r = 1 - r^2 (1/2! - r^2/4! + ... - r^14/16!).
    double pc = -0x1.ae7f3e733b81fp-45;       // -1/16!
    pc = dfma(pc, r2, 0x1.93974a8c07c9dp-37);   // 1/14!
    pc = dfma(pc, r2, -0x1.1eed8eff8d898p-29);  // -1/12!
    pc = dfma(pc, r2, 0x1.27e4fb7789f5cp-22);   // 1/10!
    pc = dfma(pc, r2, -0x1.a01a01a01a01ap-16);  // -1/8!
    pc = dfma(pc, r2, 0x1.6c16c16c16c17p-10);   // 1/6!
    pc = dfma(pc, r2, -0x1.5555555555555p-5);   // -1/4!
    pc = dfma(pc, r2, 0.5);                     // 1/2!
    const double cr = dfma(-r2, pc, 1.0);
    double sv, cv;
    switch (q & 3u) {
        case 0: sv = sr; cv = cr; break;
        case 1: sv = cr; cv = -sr; break;
        case 2: sv = -sr; cv = -cr; break;
        default: sv = -cr; cv = sr; break;
    }
    *c = float(cv);
    *s = float(sv);
}

BITGATE_HD void rope_cos_sin(int32_t pos, int64_t i, int64_t head_dim, float base, float* c, float* s) {
    rope_cos_sin_freq(pos, rope_freq(i, head_dim, base), c, s);
}

}  // namespace bitgate
