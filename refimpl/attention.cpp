#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "bitgate/exp.hpp"
#include "bitgate/f16.hpp"
#include "fma_clones.hpp"

namespace bitgate::ref {

BITGATE_FMA_CLONES void attention_split(const float* q, const float* k, const float* v, int64_t j0, int64_t j1,
                                        int64_t head_dim, float scale, float& m, float& l, float* acc) {
    const int64_t D = head_dim;
    std::vector<float> s(size_t(j1 - j0));
    for (int64_t j = j0; j < j1; ++j) {
        const float* kj = k + j * D;
        float dot = 0.0f;
        for (int64_t d = 0; d < D; ++d) dot = std::fma(q[d], kj[d], dot);
        s[size_t(j - j0)] = dot * scale;
    }
    // The max of finite values is the same whatever the order; the kernels use a tree.
    m = s[0];
    for (float x : s) m = x > m ? x : m;
    l = 0.0f;
    for (float& x : s) {
        x = exp_det(x - m);
        l = l + x;
    }
    for (int64_t d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int64_t j = j0; j < j1; ++j) {
        const float p = s[size_t(j - j0)];
        const float* vj = v + j * D;
        for (int64_t d = 0; d < D; ++d) acc[d] = std::fma(p, vj[d], acc[d]);
    }
}

BITGATE_FMA_CLONES void attention_fold(float& M, float& Ls, float* A, float m, float l, const float* acc,
                                       int64_t head_dim) {
    const float Mn = m > M ? m : M;
    const float a = exp_det(M - Mn), b = exp_det(m - Mn);
    Ls = std::fma(Ls, a, l * b);
    for (int64_t d = 0; d < head_dim; ++d) A[d] = std::fma(A[d], a, acc[d] * b);
    M = Mn;
}

namespace {

// attention_split on K transposed ([d][position], kt_stride floats apart, zero past L up to
// kt_stride), laid out so the compiler vectorizes it: the scores kBlock keys at a time, each lane
// its key's own fma chain over d from +0; exp_det per score; l summed in key order; p.v with
// lanes over d. Lanes past j1 read the zero padding and are dropped. The same operations on the
// same floats as attention_split, so the same bits (tests/attention_test.cpp holds the two paths
// equal byte for byte).
constexpr int64_t kBlock = 64;

BITGATE_SIMD_CLONES void split_transposed(const float* __restrict q, const float* __restrict kt, int64_t kt_stride,
                                          const float* __restrict v, int64_t j0, int64_t j1, int64_t D, float scale,
                                          float& m_out, float& l_out, float* __restrict acc, float* __restrict s) {
    const int64_t n = j1 - j0;
    for (int64_t j = 0; j < n; j += kBlock) {
        float dot[kBlock] = {};
        for (int64_t d = 0; d < D; ++d) {
            const float qd = q[d];
            const float* kr = kt + d * kt_stride + j0 + j;
            for (int64_t b = 0; b < kBlock; ++b) dot[b] = std::fma(qd, kr[b], dot[b]);
        }
        for (int64_t b = 0; b < kBlock; ++b) s[j + b] = dot[b] * scale;
    }
    // Locals, not the references: a store through s could otherwise change them, and the
    // compiler would not vectorize the loops that read them.
    float m = s[0];
    for (int64_t j = 0; j < n; ++j) m = s[j] > m ? s[j] : m;
    for (int64_t j = 0; j < n; ++j) s[j] = exp_det(s[j] - m);
    float l = 0.0f;
    for (int64_t j = 0; j < n; ++j) l = l + s[j];
    for (int64_t d = 0; d < D; ++d) acc[d] = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
        const float p = s[j];
        const float* vj = v + (j0 + j) * D;
        for (int64_t d = 0; d < D; ++d) acc[d] = std::fma(p, vj[d], acc[d]);
    }
    m_out = m;
    l_out = l;
}

}  // namespace

void attention_f16kv(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                     int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out, HostPath path) {
    const int64_t D = head_dim, G = n_head / n_kv_head;
    const float scale = attention_scale(D);
    const bool plain = path == HostPath::scalar;
    // Only the L valid positions are converted: the cache beyond them is never read. The fast
    // path keeps K transposed, rows of Lp (L rounded up to a block, zero-padded).
    const int64_t Lp = (L + kBlock - 1) / kBlock * kBlock, k_rows = plain ? L : Lp;
    std::vector<float> k(static_cast<size_t>(n_kv_head * k_rows * D)),
        v(static_cast<size_t>(n_kv_head * L * D));
    for (int64_t kvh = 0; kvh < n_kv_head; ++kvh)
        for (int64_t j = 0; j < L; ++j)
            for (int64_t d = 0; d < D; ++d) {
                const int64_t at = (kvh * ctx + j) * D + d;
                k[size_t(plain ? (kvh * L + j) * D + d : (kvh * D + d) * Lp + j)] = f16_to_f32(k_cache[at]);
                v[size_t((kvh * L + j) * D + d)] = f16_to_f32(v_cache[at]);
            }
    // Work item (kv head, query): the group's heads for that query. Items write disjoint rows of
    // out, so the threads that share them out change no bit.
    const int64_t items = n_kv_head * n_q;
    auto work = [&](int64_t first, int64_t step) {
        std::vector<float> acc(static_cast<size_t>(D)), A(static_cast<size_t>(D)), GA(static_cast<size_t>(D)),
            s(static_cast<size_t>(kAttnSplit));
        for (int64_t it = first; it < items; it += step) {
            const int64_t kvh = it % n_kv_head, i = it / n_kv_head, n_keys = L - n_q + i + 1;
            const float* kh = k.data() + kvh * k_rows * D;
            const float* vh = v.data() + kvh * L * D;
            for (int64_t g = 0; g < G; ++g) {
                const int64_t h = kvh * G + g;
                const float* qr = q + (i * n_head + h) * D;
                float M = 0.0f, Ls = 0.0f, GM = 0.0f, GLs = 0.0f;  // the whole fold, and its group's
                const int64_t n_split = attn_splits(n_keys);
                for (int64_t c = 0; c < n_split; ++c) {
                    const int64_t j0 = c * kAttnSplit, j1 = std::min(n_keys, j0 + kAttnSplit);
                    float m = 0.0f, l = 0.0f;
                    if (plain)
                        attention_split(qr, kh, vh, j0, j1, D, scale, m, l, acc.data());
                    else
                        split_transposed(qr, kh, Lp, vh, j0, j1, D, scale, m, l, acc.data(), s.data());
                    // Level one: the split into its group (the group's first split starts it).
                    if (c % kAttnFoldGroup == 0) {
                        GM = m, GLs = l, GA = acc;
                    } else {
                        attention_fold(GM, GLs, GA.data(), m, l, acc.data(), D);
                    }
                    if (c % kAttnFoldGroup != kAttnFoldGroup - 1 && c != n_split - 1) continue;
                    // Level two: a complete group into the whole (group 0 starts it).
                    if (c < kAttnFoldGroup) {
                        M = GM, Ls = GLs, A = GA;
                    } else {
                        attention_fold(M, Ls, A.data(), GM, GLs, GA.data(), D);
                    }
                }
                float* o = out + (i * n_head + h) * D;
                for (int64_t d = 0; d < D; ++d) o[d] = A[size_t(d)] / Ls;
            }
        }
    };
    // About 2 n_head D multiply-adds per (query, key) pair.
    const double fmas = 2.0 * double(n_head * D) * (double(n_q) * double(L - n_q) + double(n_q) * double(n_q + 1) / 2);
    const int64_t threads =
        fmas < 5e7 ? 1 : std::min<int64_t>({int64_t(std::max(1u, std::thread::hardware_concurrency())), 16, items});
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
    work(0, threads);
    for (auto& th : pool) th.join();
}

std::string attention_decode_problem(int64_t n_q, int64_t n_head, int64_t n_kv_head) {
    if (n_q != 1) return "decode needs n_q == 1";
    return n_head / n_kv_head <= 64 ? "" : "decode needs n_head / n_kv_head <= 64";
}

}  // namespace bitgate::ref
