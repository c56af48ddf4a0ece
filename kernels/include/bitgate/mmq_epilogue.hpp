// The float epilogue of mmq_q8_0, one definition compiled for the host model and the kernel.
//
// Per (token t, weight row r) the int8 tensor cores give exact int32 sums per 32-k chunk c:
//   sumi = sum_k qa[t][c][k] * qw[r][c][k]        |sumi| <= 32 * 128 * 128 = 2^19
// and the float result is, in ascending chunk order from acc = +0:
//   term = RN(sumi * da[t][c])
//   acc  = RN(term * dw[r][c] + acc)              (one fmaf)
// The kernel gets `sumi` as a float without an int->float conversion: the MMA accumulates onto
// kMagicBits, so its int32 result read as a float is kMagic + sumi exactly, and
// fmaf(kMagic + sumi, da, -kMagic * da) has the exact intermediate sumi * da (kMagic * da is exact
// for every f16 da: 2 + 11 significant bits), hence equals RN(sumi * da). The host model runs the
// same two fmaf on the same operands, so it needs no argument about equivalence at all.
#pragma once
#include <cmath>
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate::mmq {

// 1.5 * 2^23. For |s| <= 2^22 the float with bits kMagicBits + s is kMagic + s.
constexpr int32_t kMagicBits = 0x4B400000;
constexpr float kMagic = 12582912.0f;

// -kMagic * da, exact (so the rounding mode is moot, but it is spelled for the PTX lint).
BITGATE_HD float neg_magic_times(float da) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(-kMagic, da);
#else
    return -kMagic * da;
#endif
}

// RN(sumi * da), from biased = kMagic + sumi and neg_magic_da = -kMagic * da.
BITGATE_HD float chunk_term(float biased, float da, float neg_magic_da) {
#if defined(__CUDA_ARCH__)
    return fmaf(biased, da, neg_magic_da);
#else
    return std::fma(biased, da, neg_magic_da);
#endif
}

// acc + term * dw, one rounding.
BITGATE_HD float chunk_accumulate(float term, float dw, float acc) {
#if defined(__CUDA_ARCH__)
    return fmaf(term, dw, acc);
#else
    return std::fma(term, dw, acc);
#endif
}

}  // namespace bitgate::mmq
