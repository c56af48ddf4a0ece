#include "mmq_q8_0.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstring>
#include <string>
#include <stdexcept>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "bitgate/f16.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::ref {

namespace {

// The plane unpacked to plain row-major int8, with its scales transposed to [chunk][token]; the
// token count padded to a multiple of 4 with zero rows (computed, never stored).
struct Plane {
    int64_t K = 0, nchunk = 0, n4 = 0;
    std::vector<int8_t> a;        // [n4][K]
    std::vector<float> da, nmda;  // [nchunk][n4]: d and -kMagic * d of the activation
};

// The weights unpacked the same way (for the 4 x 4 blocks), rows padded to a multiple of 4.
struct Rows {
    int64_t N4 = 0;
    std::vector<int8_t> w;   // [N4][K]
    std::vector<float> dw;   // [nchunk][N4]
};

Plane unpack_plane(const uint8_t* qs, const uint32_t* sda, int64_t n, int64_t K) {
    Plane o;
    o.K = K;
    o.nchunk = K / QK8_0;
    o.n4 = (n + 3) / 4 * 4;
    o.a.assign(size_t(o.n4 * K), 0);
    o.da.assign(size_t(o.n4 * o.nchunk), 0.0f);
    o.nmda.assign(size_t(o.n4 * o.nchunk), 0.0f);
    for (int64_t t = 0; t < n; ++t) {
        const int64_t tb = t / kPad40Tokens, r = t % kPad40Tokens;
        for (int64_t c = 0; c < o.nchunk; ++c) {
            const size_t tile = size_t(tb * o.nchunk + c);
            for (uint32_t u = 0; u < 8; ++u)
                std::memcpy(&o.a[size_t(t * K + c * QK8_0 + u * 4)],
                            qs + tile * kPad40TileBytes + pad40_qs_offset(uint32_t(r), u), 4);
            const float d = f16_to_f32(uint16_t(sda[tile * kPad40Tokens + size_t(r)] & 0xffffu));
            o.da[size_t(c * o.n4 + t)] = d;
            o.nmda[size_t(c * o.n4 + t)] = mmq::neg_magic_times(d);
        }
    }
    return o;
}

Rows unpack_rows(const BlockQ8_0* w, int64_t N, int64_t nchunk) {
    Rows o;
    o.N4 = (N + 3) / 4 * 4;
    const int64_t K = nchunk * QK8_0;
    o.w.assign(size_t(o.N4 * K), 0);
    o.dw.assign(size_t(o.N4 * nchunk), 0.0f);
    for (int64_t r = 0; r < N; ++r)
        for (int64_t c = 0; c < nchunk; ++c) {
            const BlockQ8_0& b = w[r * nchunk + c];
            std::memcpy(&o.w[size_t(r * K + c * QK8_0)], b.qs, QK8_0);
            o.dw[size_t(c * o.N4 + r)] = f16_to_f32(b.d);
        }
    return o;
}

// One 4 x 4 block of (token, row) pairs over all chunks, in plain C++: the definition.
void quad_scalar(const Plane& o, const Rows& wr, int64_t t0, int64_t r0, float* C, int64_t n, int64_t N, MmqOrder order) {
    const int64_t K = o.K, nc = o.nchunk;
    float acc[4][4] = {}, part[4][4] = {};
    for (int64_t c = 0; c < nc; ++c) {
        const bool stage_end = c % 4 == 3 || c == nc - 1;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                const int8_t* a = &o.a[size_t((t0 + i) * K + c * QK8_0)];
                const int8_t* b = &wr.w[size_t((r0 + j) * K + c * QK8_0)];
                int32_t sumi = 0;
                for (int k = 0; k < QK8_0; ++k) sumi += int32_t(a[k]) * int32_t(b[k]);
                // kMagic + sumi is exact (|sumi| <= 2^19): the float the kernel reads from the
                // MMA's biased int32 result.
                const float term = mmq::chunk_term(float(sumi) + mmq::kMagic, o.da[size_t(c * o.n4 + t0 + i)],
                                                   o.nmda[size_t(c * o.n4 + t0 + i)]);
                const float dw = wr.dw[size_t(c * wr.N4 + r0 + j)];
                if (order == MmqOrder::ascending) {
                    acc[i][j] = mmq::chunk_accumulate(term, dw, acc[i][j]);
                } else {
                    part[i][j] = mmq::chunk_accumulate(term, dw, part[i][j]);
                    if (stage_end) {
                        acc[i][j] = acc[i][j] + part[i][j];
                        part[i][j] = 0.0f;
                    }
                }
            }
    }
    for (int i = 0; i < 4 && t0 + i < n; ++i)
        for (int j = 0; j < 4 && r0 + j < N; ++j) C[(t0 + i) * N + r0 + j] = acc[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same block with AVX2: the integer sums are exact in any order, int32 -> float of
// |sumi| <= 2^19 and kMagic + that are exact, and each fma is correctly rounded, so every lane
// computes exactly the scalar definition's operations (the tests compare the two byte for byte).
__attribute__((target("avx2,fma"))) void quad_avx2(const Plane& o, const Rows& wr, int64_t t0, int64_t r0, float* C,
                                                   int64_t n, int64_t N, MmqOrder order) {
    const int64_t K = o.K, nc = o.nchunk;
    const __m256i lo_tok = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m256i hi_tok = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
    const __m256 magic = _mm256_set1_ps(mmq::kMagic);
    // Lanes are (token i, row j), i-major: acc01 holds tokens 0 and 1, acc23 tokens 2 and 3.
    __m256 acc01 = _mm256_setzero_ps(), acc23 = _mm256_setzero_ps();
    __m256 part01 = _mm256_setzero_ps(), part23 = _mm256_setzero_ps();
    for (int64_t c = 0; c < nc; ++c) {
        __m256i a16[4][2], w16[4][2];
        for (int i = 0; i < 4; ++i) {
            const int8_t* a = &o.a[size_t((t0 + i) * K + c * QK8_0)];
            const int8_t* b = &wr.w[size_t((r0 + i) * K + c * QK8_0)];
            a16[i][0] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
            a16[i][1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16)));
            w16[i][0] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
            w16[i][1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16)));
        }
        __m256i h[4];  // h[i]: per 128-bit half, the partial sums of (i, 0..3)
        for (int i = 0; i < 4; ++i) {
            __m256i d[4];
            for (int j = 0; j < 4; ++j)
                d[j] = _mm256_add_epi32(_mm256_madd_epi16(a16[i][0], w16[j][0]), _mm256_madd_epi16(a16[i][1], w16[j][1]));
            h[i] = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]), _mm256_hadd_epi32(d[2], d[3]));
        }
        const __m256i s01 = _mm256_add_epi32(_mm256_permute2x128_si256(h[0], h[1], 0x20),
                                             _mm256_permute2x128_si256(h[0], h[1], 0x31));
        const __m256i s23 = _mm256_add_epi32(_mm256_permute2x128_si256(h[2], h[3], 0x20),
                                             _mm256_permute2x128_si256(h[2], h[3], 0x31));
        const __m256 da4 = _mm256_castps128_ps256(_mm_loadu_ps(&o.da[size_t(c * o.n4 + t0)]));
        const __m256 nm4 = _mm256_castps128_ps256(_mm_loadu_ps(&o.nmda[size_t(c * o.n4 + t0)]));
        const __m256 dw = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(&wr.dw[size_t(c * wr.N4 + r0)]));
        const __m256 term01 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_cvtepi32_ps(s01), magic),
                                              _mm256_permutevar8x32_ps(da4, lo_tok), _mm256_permutevar8x32_ps(nm4, lo_tok));
        const __m256 term23 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_cvtepi32_ps(s23), magic),
                                              _mm256_permutevar8x32_ps(da4, hi_tok), _mm256_permutevar8x32_ps(nm4, hi_tok));
        if (order == MmqOrder::ascending) {
            acc01 = _mm256_fmadd_ps(term01, dw, acc01);
            acc23 = _mm256_fmadd_ps(term23, dw, acc23);
        } else {
            part01 = _mm256_fmadd_ps(term01, dw, part01);
            part23 = _mm256_fmadd_ps(term23, dw, part23);
            if (c % 4 == 3 || c == nc - 1) {
                acc01 = _mm256_add_ps(acc01, part01);
                acc23 = _mm256_add_ps(acc23, part23);
                part01 = part23 = _mm256_setzero_ps();
            }
        }
    }
    alignas(32) float out[16];
    _mm256_store_ps(out, acc01);
    _mm256_store_ps(out + 8, acc23);
    for (int i = 0; i < 4 && t0 + i < n; ++i)
        for (int j = 0; j < 4 && r0 + j < N; ++j) C[(t0 + i) * N + r0 + j] = out[i * 4 + j];
}

// Sixteen weight rows packed for vpdpbusd, which multiplies unsigned bytes by signed ones: for
// chunk c and quad u, one 64-byte word holds bytes 4u .. 4u+3 of block c of each row, stored as
// w + 128 (w ^ 0x80), rows past N as zero weights; dw[c][16] the rows' scales.
constexpr int kPanelRows = 16;

struct Panel {
    std::vector<uint32_t> w;  // [nchunk][8][16]
    std::vector<float> dw;    // [nchunk][16]
};

void pack_panel(const BlockQ8_0* w, int64_t r0, int64_t N, int64_t nchunk, Panel& p) {
    p.w.resize(size_t(nchunk * 8 * kPanelRows));
    p.dw.resize(size_t(nchunk * kPanelRows));
    for (int j = 0; j < kPanelRows; ++j) {
        const int64_t r = r0 + j;
        for (int64_t c = 0; c < nchunk; ++c) {
            uint32_t* dst = &p.w[size_t(c * 8 * kPanelRows + j)];
            if (r >= N) {
                for (int u = 0; u < 8; ++u) dst[u * kPanelRows] = 0x80808080u;
                p.dw[size_t(c * kPanelRows + j)] = 0.0f;
                continue;
            }
            const BlockQ8_0& b = w[r * nchunk + c];
            for (int u = 0; u < 8; ++u) {
                uint32_t q;
                std::memcpy(&q, b.qs + 4 * u, 4);
                dst[u * kPanelRows] = q ^ 0x80808080u;
            }
            p.dw[size_t(c * kPanelRows + j)] = f16_to_f32(b.d);
        }
    }
}

// kMagicBits - 128 * (the sum of token t's 32 quants of chunk c), per [t][c]: the start of the
// vpdpbusd sums. With the weights stored as w + 128 they add sumi + 128 * sum(a), so the lane
// ends at kMagicBits + sumi, whose bits read as a float are kMagic + sumi exactly (the value
// the scalar definition forms as float(sumi) + kMagic, and the GPU's MMA leaves).
std::vector<int32_t> vnni_starts(const Plane& o) {
    std::vector<int32_t> s(size_t(o.n4 * o.nchunk));
    for (int64_t t = 0; t < o.n4; ++t)
        for (int64_t c = 0; c < o.nchunk; ++c) {
            int32_t sum = 0;
            for (int k = 0; k < QK8_0; ++k) sum += o.a[size_t(t * o.K + c * QK8_0 + k)];
            s[size_t(t * o.nchunk + c)] = mmq::kMagicBits - 128 * sum;
        }
    return s;
}

// T tokens from t0 against one panel, every chunk in ascending order: per (token, row) exactly
// the definition's two fmas a chunk on the same floats. Lanes are the panel's 16 rows.
template <int T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma"))) void tile_vnni(
    const Plane& o, const int32_t* starts, const Panel& p, int64_t t0, int64_t r0, float* C, int64_t n, int64_t N) {
    const int64_t K = o.K, nc = o.nchunk;
    __m512 acc[T];
#pragma GCC unroll 16
    for (int i = 0; i < T; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t c = 0; c < nc; ++c) {
        __m512i s[T];
#pragma GCC unroll 16
        for (int i = 0; i < T; ++i) s[i] = _mm512_set1_epi32(starts[(t0 + i) * nc + c]);
        const uint32_t* wq = &p.w[size_t(c * 8 * kPanelRows)];
#pragma GCC unroll 8
        for (int u = 0; u < 8; ++u) {
            const __m512i wv = _mm512_loadu_si512(wq + u * kPanelRows);
#pragma GCC unroll 16
            for (int i = 0; i < T; ++i) {
                int32_t a4;
                std::memcpy(&a4, &o.a[size_t((t0 + i) * K + c * QK8_0 + u * 4)], 4);
                s[i] = _mm512_dpbusd_epi32(s[i], wv, _mm512_set1_epi32(a4));
            }
        }
        const __m512 dw = _mm512_loadu_ps(&p.dw[size_t(c * kPanelRows)]);
#pragma GCC unroll 16
        for (int i = 0; i < T; ++i) {
            const size_t at = size_t(c * o.n4 + t0 + i);
            const __m512 term =
                _mm512_fmadd_ps(_mm512_castsi512_ps(s[i]), _mm512_set1_ps(o.da[at]), _mm512_set1_ps(o.nmda[at]));
            acc[i] = _mm512_fmadd_ps(term, dw, acc[i]);
        }
    }
    const int64_t live = std::min<int64_t>(kPanelRows, N - r0);
    const __mmask16 m = static_cast<__mmask16>((1u << live) - 1u);
#pragma GCC unroll 16
    for (int i = 0; i < T; ++i)
        if (t0 + i < n) _mm512_mask_storeu_ps(C + (t0 + i) * N + r0, m, acc[i]);
}
#endif

// Shares `items` out to threads (atomically numbered, so the split never changes a byte: every
// item writes its own outputs); one thread below `macs` of 5e7.
template <class F>
void share_out(int64_t items, double macs, F&& item) {
    std::atomic<int64_t> next{0};
    auto work = [&] {
        for (int64_t i = next++; i < items; i = next++) item(i);
    };
    const int64_t threads =
        macs < 5e7 ? 1 : std::min<int64_t>({int64_t(std::max(1u, std::thread::hardware_concurrency())), 16, items});
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
}

}  // namespace

void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
              int64_t K, MmqOrder order, HostPath path) {
    if (path != HostPath::scalar && !host_path_available(path))
        throw std::invalid_argument(std::string("mmq_q8_0: this CPU has no ") + host_path_name(path) + " path");
    const Plane o = unpack_plane(qs, sda, n, K);
    const double macs = double(n) * double(N) * double(K);
#if defined(__x86_64__) && defined(__GNUC__)
    // The panels' path computes the contract's order only.
    const bool vnni = order == MmqOrder::ascending &&
                      (path == HostPath::avx512_vnni ||
                       (path == HostPath::fastest && host_path_available(HostPath::avx512_vnni)));
    if (vnni) {
        // A panel of 16 rows against 8 tokens at a time: the panel (16 K bytes) stays in L2
        // while the tokens stream past it.
        const std::vector<int32_t> starts = vnni_starts(o);
        share_out((N + kPanelRows - 1) / kPanelRows, macs, [&](int64_t pi) {
            thread_local Panel p;
            const int64_t r0 = pi * kPanelRows;
            pack_panel(w, r0, N, o.nchunk, p);
            int64_t t0 = 0;
            for (; t0 + 8 <= o.n4; t0 += 8) tile_vnni<8>(o, starts.data(), p, t0, r0, C, n, N);
            if (t0 < o.n4) tile_vnni<4>(o, starts.data(), p, t0, r0, C, n, N);
        });
        return;
    }
#endif
    const Rows wr = unpack_rows(w, N, o.nchunk);
    auto quad = quad_scalar;
#if defined(__x86_64__) && defined(__GNUC__)
    if (path == HostPath::avx2 || (path == HostPath::fastest && host_path_available(HostPath::avx2))) quad = quad_avx2;
#endif
    // 32 tokens at a time against 4 rows at a time: the 4 weight rows stay in L1 while the
    // token group's rows stay in L2.
    constexpr int64_t kGroup = 32;
    share_out((o.n4 + kGroup - 1) / kGroup, macs, [&](int64_t gi) {
        const int64_t g0 = gi * kGroup;
        for (int64_t r0 = 0; r0 < wr.N4; r0 += 4)
            for (int64_t t0 = g0; t0 < std::min(g0 + kGroup, o.n4); t0 += 4) quad(o, wr, t0, r0, C, n, N, order);
    });
}

}  // namespace bitgate::ref
