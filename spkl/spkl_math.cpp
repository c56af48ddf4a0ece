#include "spkl_math.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

// The row loops are built for AVX-512, AVX2 and the baseline, the best picked at load time; not
// under ThreadSanitizer, whose runtime is not up when the loader runs the clones' resolvers.
#if defined(__SANITIZE_THREAD__)
#define BITGATE_SPKL_CLONES
#else
#define BITGATE_SPKL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

namespace bitgate::spkl {
namespace {

// Eight lanes whatever the target: the AVX-512 clone uses one register per vector, the AVX2 clone
// two, the baseline clone four; every lane sees the same IEEE operations in the same order, so all
// clones agree bit for bit (and -ffp-contract=off keeps the compiler from fusing mul+add).
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

constexpr double kInvLn2 = 1.4426950408889634074;
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000: k * kLn2Hi is exact
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
constexpr double kShifter = 6755399441055744.0;        // 1.5 * 2^52: x + kShifter rounds x to an integer
constexpr double kExpMin = -708.0;                     // exp(-708) > DBL_MIN: 2^k stays normal
constexpr double kExpMax = 709.0;                      // exp(709) < DBL_MAX

// exp(r) on |r| <= ln2/2 + a little: Taylor to degree 13 (remainder < 5e-18), Horner, no FMA.
// exp on lanes already known to hold x <= 0 (or x < kExpMin, NaN, -inf: those lanes compute
// garbage that the final select replaces by 0). On [kExpMin, 0] it is the same sequence of
// operations as exp8 below, so the two agree bit for bit there.
// Vectors pass by reference: no 64-byte vector crosses a call boundary (GCC warns that such
// an ABI differs between targets).
[[gnu::always_inline]] inline void exp8_core(const v8d& xc, v8d& out) {
    const v8d t = xc * kInvLn2 + kShifter;
    const v8d k = t - kShifter;
    const v8d r = (xc - k * kLn2Hi) - k * kLn2Lo;
    // exp(r) = 1 + (r + r^2 P(r)), P the Taylor tail 1/2! + r/3! + ... + r^11/13!, evaluated
    // with Estrin's scheme (a shallow tree: the loop is not one 13-deep dependency chain); the
    // leading 1 + r is added last, so the tail's rounding stays far below 1 ulp of the result.
    const v8d r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    const v8d q0 = r * (1.0 / 6.0) + 0.5;
    const v8d q1 = r * (1.0 / 120.0) + (1.0 / 24.0);
    const v8d q2 = r * (1.0 / 5040.0) + (1.0 / 720.0);
    const v8d q3 = r * (1.0 / 362880.0) + (1.0 / 40320.0);
    const v8d q4 = r * (1.0 / 39916800.0) + (1.0 / 3628800.0);
    const v8d q5 = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);
    const v8d s0 = q1 * r2 + q0, s1 = q3 * r2 + q2, s2 = q5 * r2 + q4;
    const v8d tail = (s1 * r4 + s0) + s2 * r8;
    const v8d p = (r + r2 * tail) + 1.0;
    // t's low mantissa bits hold k in two's complement; shifting out the rest leaves 2^k's bits.
    const v8l scale_bits = ((v8l)t + 1023) << 52;
    out = p * (v8d)scale_bits;
}

[[gnu::always_inline]] inline void exp8_nonpos(const v8d& x, v8d& out) {
    v8d y;
    exp8_core(x, y);
    const v8d zero = {};
    out = x >= kExpMin ? y : zero;
}

// exp on any lanes: clamped into [kExpMin, kExpMax] first, 0 below, +inf above.
[[gnu::always_inline]] inline void exp8(const v8d& x, v8d& out) {
    v8d xc = x < kExpMin ? kExpMin : x;
    xc = xc > kExpMax ? kExpMax : xc;
    v8d y;
    exp8_core(xc, y);
    const v8d zero = {};
    const v8d inf = zero + __builtin_inf();
    out = x < kExpMin ? zero : (x > kExpMax ? inf : y);
}

[[gnu::always_inline]] inline double lane_sum(const v8d& v) {
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

}  // namespace

double det_exp(double x) {
    v8d v = {};
    v[0] = x;
    v8d y;
    exp8(v, y);
    return y[0];
}

double det_log(double x) {
    // x = 2^e * m, m in [sqrt(1/2), sqrt(2)); log(m) = f - (h - s*(h + R)), f = m - 1,
    // s = f / (2 + f), h = f*f/2, R = sum 2 s^(2j) / (2j + 1)  (the atanh series).
    uint64_t bits = std::bit_cast<uint64_t>(x);
    int e = 0;
    if ((bits >> 52) == 0) {  // subnormal: scale into the normal range
        bits = std::bit_cast<uint64_t>(x * 18014398509481984.0);  // 2^54
        e = -54;
    }
    e += static_cast<int>(bits >> 52) - 1023;
    bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
    double m = std::bit_cast<double>(bits);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        ++e;
    }
    const double f = m - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    double R = z * (2.0 / 23) + 2.0 / 21;
    R = R * z + 2.0 / 19;
    R = R * z + 2.0 / 17;
    R = R * z + 2.0 / 15;
    R = R * z + 2.0 / 13;
    R = R * z + 2.0 / 11;
    R = R * z + 2.0 / 9;
    R = R * z + 2.0 / 7;
    R = R * z + 2.0 / 5;
    R = R * z + 2.0 / 3;
    R = R * z;
    const double h = 0.5 * f * f;
    const double logm = f - (h - s * (h + R));
    const double ed = e;
    return ed * kLn2Hi + (logm + ed * kLn2Lo);
}

BITGATE_SPKL_CLONES
RowMax row_max(const float* x, size_t n) {
    RowMax out;
    const float ninf = -std::numeric_limits<float>::infinity();
    v16f m = {ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf};
    v16f z = {};  // x * 0 is 0 for finite x and NaN for NaN or infinity
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v16f v;
        std::memcpy(&v, x + i, sizeof v);
        m = v > m ? v : m;
        z = z + v * 0.0f;
    }
    float mx = ninf, zs = 0.0f;
    for (int l = 0; l < 16; ++l) {
        mx = m[l] > mx ? m[l] : mx;
        zs = zs + z[l];
    }
    for (; i < n; ++i) {
        mx = x[i] > mx ? x[i] : mx;
        zs = zs + x[i] * 0.0f;
    }
    out.max = mx;
    if (zs != 0.0f || std::isnan(zs)) {
        out.finite = false;
        for (size_t j = 0; j < n; ++j)
            if (!std::isfinite(x[j])) { out.bad_id = static_cast<uint32_t>(j); break; }
    }
    for (size_t j = 0; j < n; ++j)
        if (x[j] == mx) { out.argmax = static_cast<uint32_t>(j); break; }
    return out;
}

BITGATE_SPKL_CLONES
RowSums row_sums(const float* a, const float* b, size_t n, float a_shift, float b_shift) {
    const v8d zero = {};
    const v8d va = zero + static_cast<double>(a_shift);
    const v8d vb = zero + static_cast<double>(b_shift);
    v8d sa = {}, sb = {}, d = {}, t = {};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f fa, fb;
        std::memcpy(&fa, a + i, sizeof fa);
        std::memcpy(&fb, b + i, sizeof fb);
        const v8d da = __builtin_convertvector(fa, v8d);
        const v8d db = __builtin_convertvector(fb, v8d);
        const v8d xa = da - va, xb = db - vb;
        v8d ea, eb;
        exp8_nonpos(xa, ea);
        exp8_nonpos(xb, eb);
        sa += ea;
        sb += eb;
        d += eb - ea;
        t += ea * (xa - xb);
    }
    if (i < n) {  // the ragged tail: the same lanes, the missing ones contributing exact zeros
        v8d da = {}, db = {};
        v8l valid = {};
        for (size_t l = 0; i + l < n; ++l) {
            da[l] = a[i + l];
            db[l] = b[i + l];
            valid[l] = -1;
        }
        const v8d xa = da - va, xb = db - vb;
        v8d ea, eb;
        exp8_nonpos(xa, ea);
        exp8_nonpos(xb, eb);
        ea = valid ? ea : zero;
        eb = valid ? eb : zero;
        sa += ea;
        sb += eb;
        d += eb - ea;
        t += ea * (valid ? xa - xb : zero);
    }
    return {lane_sum(sa), lane_sum(sb), lane_sum(d), lane_sum(t)};
}

double det_log1p(double x) {
    // Goldberg's trick: u = 1 + x rounded; log(u) * x / (u - 1) corrects for the rounding of u.
    const double u = 1.0 + x;
    if (u == 1.0) return x;
    return det_log(u) * (x / (u - 1.0));
}

RowKld row_kld(const float* a, const float* b, size_t n, float ma, float mb) {
    const RowSums s = row_sums(a, b, n, ma, mb);
    RowKld k;
    k.a_shift = ma;
    k.b_shift = mb;
    k.log_sa = det_log(s.sa);
    k.log_sb = det_log(s.sb);
    k.kld = s.t / s.sa + det_log1p(s.d / s.sa);
    return k;
}

}  // namespace bitgate::spkl
