// The per-row arithmetic of `spkl diff`: row maxima, and KL(A||B) from log-softmax in double.
//
// Determinism rule: every value here is a pure function of the row's bytes. exp and log are our
// own, built from IEEE +, -, *, / and integer bit operations only (no FMA, no libm), and the
// vector code works on a fixed 8-lane layout whatever the CPU (AVX-512, AVX2 or plain SSE2 clones
// of the same source), so the same rows give the same bits on every machine and thread count.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bitgate::spkl {

// exp(x) in double, |error| <= 2 ulp against the exact value for x in [-708, 709] (tested);
// 0 below -708 (such a term is below 2^-1021 and cannot move a softmax sum, which contains 1),
// +inf above 709.
double det_exp(double x);
// log(x) for finite x > 0, |error| <= 1 ulp (tested); log(1) == 0 exactly.
double det_log(double x);

// Maximum of a row and the first index that holds it; `finite` is false when any value is NaN or
// infinite, and then `bad_id` is the first such index.
struct RowMax {
    float max = 0;
    uint32_t argmax = 0;
    bool finite = true;
    uint32_t bad_id = 0;
};
RowMax row_max(const float* x, size_t n);

// log(1 + x) for x > -1, accurate near 0 (|error| <= 3 ulp, tested); log1p(0) == 0 exactly.
double det_log1p(double x);

// One pass over a row pair, xa = a - ma and xb = b - mb (exact in double): Sa = sum exp(xa),
// Sb = sum exp(xb), D = sum (exp(xb) - exp(xa)), T = sum exp(xa) * (xa - xb); each in double, in
// the fixed 8-lane order.
struct RowSums {
    double sa = 0, sb = 0, d = 0, t = 0;
};
RowSums row_sums(const float* a, const float* b, size_t n, float ma, float mb);

// KL(A||B) of one row from its maxima. log p_a - log p_b = (xa - xb) - log Sa + log Sb, so
// KL = T/Sa + log(Sb/Sa) = T/Sa + log1p(D/Sa). Both terms are built from differences of the
// shifted logits and of the exponentials, never from the difference of two normalisers of size
// log(vocab): nearby rows lose no digits to cancellation there, a shifted copy (b = a + c
// exactly) gives 0, and identical rows give exactly 0.
struct RowKld {
    double kld = 0;
    float a_shift = 0, b_shift = 0;
    double log_sa = 0, log_sb = 0;  // log p_a(i) = (a_i - a_shift) - log_sa, likewise for b
};
RowKld row_kld(const float* a, const float* b, size_t n, float ma, float mb);

}  // namespace bitgate::spkl
