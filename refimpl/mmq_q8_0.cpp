#include "mmq_q8_0.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "bitgate/f16.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::ref {

namespace {

// The plane and the weights unpacked to plain row-major int8, with the scales transposed to
// [chunk][token] and [chunk][row]; token and row counts padded to multiples of 4 with zero rows
// (computed, never stored).
struct Operands {
    int64_t K = 0, nchunk = 0, n4 = 0, N4 = 0;
    std::vector<int8_t> a;        // [n4][K]
    std::vector<float> da, nmda;  // [nchunk][n4]: d and -kMagic * d of the activation
    std::vector<int8_t> w;        // [N4][K]
    std::vector<float> dw;        // [nchunk][N4]
};

Operands unpack(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, int64_t n, int64_t N, int64_t K) {
    Operands o;
    o.K = K;
    o.nchunk = K / QK8_0;
    o.n4 = (n + 3) / 4 * 4;
    o.N4 = (N + 3) / 4 * 4;
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
    o.w.assign(size_t(o.N4 * K), 0);
    o.dw.assign(size_t(o.N4 * o.nchunk), 0.0f);
    for (int64_t r = 0; r < N; ++r)
        for (int64_t c = 0; c < o.nchunk; ++c) {
            const BlockQ8_0& b = w[r * o.nchunk + c];
            std::memcpy(&o.w[size_t(r * K + c * QK8_0)], b.qs, QK8_0);
            o.dw[size_t(c * o.N4 + r)] = f16_to_f32(b.d);
        }
    return o;
}

// One 4 x 4 block of (token, row) pairs over all chunks, in plain C++: the definition.
void quad_scalar(const Operands& o, int64_t t0, int64_t r0, float* C, int64_t n, int64_t N, MmqOrder order) {
    const int64_t K = o.K, nc = o.nchunk;
    float acc[4][4] = {}, part[4][4] = {};
    for (int64_t c = 0; c < nc; ++c) {
        const bool stage_end = c % 4 == 3 || c == nc - 1;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                const int8_t* a = &o.a[size_t((t0 + i) * K + c * QK8_0)];
                const int8_t* b = &o.w[size_t((r0 + j) * K + c * QK8_0)];
                int32_t sumi = 0;
                for (int k = 0; k < QK8_0; ++k) sumi += int32_t(a[k]) * int32_t(b[k]);
                // kMagic + sumi is exact (|sumi| <= 2^19): the float the kernel reads from the
                // MMA's biased int32 result.
                const float term = mmq::chunk_term(float(sumi) + mmq::kMagic, o.da[size_t(c * o.n4 + t0 + i)],
                                                   o.nmda[size_t(c * o.n4 + t0 + i)]);
                const float dw = o.dw[size_t(c * o.N4 + r0 + j)];
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
__attribute__((target("avx2,fma"))) void quad_avx2(const Operands& o, int64_t t0, int64_t r0, float* C, int64_t n,
                                                   int64_t N, MmqOrder order) {
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
            const int8_t* b = &o.w[size_t((r0 + i) * K + c * QK8_0)];
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
        const __m256 dw = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(&o.dw[size_t(c * o.N4 + r0)]));
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

bool have_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

}  // namespace

void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
              int64_t K, MmqOrder order, MmqPath path) {
    const Operands o = unpack(qs, sda, w, n, N, K);
    auto quad = quad_scalar;
#if defined(__x86_64__) && defined(__GNUC__)
    if (path == MmqPath::fastest && have_avx2()) quad = quad_avx2;
#endif
    // 32 tokens at a time against 4 rows at a time: the 4 weight rows stay in L1 while the
    // token group's rows stay in L2. Groups write disjoint outputs, so threads change nothing
    // but the time.
    constexpr int64_t kGroup = 32;
    const int64_t groups = (o.n4 + kGroup - 1) / kGroup;
    std::atomic<int64_t> next{0};
    auto work = [&] {
        for (int64_t gi = next++; gi < groups; gi = next++) {
            const int64_t g0 = gi * kGroup;
            for (int64_t r0 = 0; r0 < o.N4; r0 += 4)
                for (int64_t t0 = g0; t0 < std::min(g0 + kGroup, o.n4); t0 += 4) quad(o, t0, r0, C, n, N, order);
        }
    };
    const double macs = double(n) * double(N) * double(K);
    const int64_t threads = macs < 5e7 ? 1 : std::min<int64_t>({int64_t(std::max(1u, std::thread::hardware_concurrency())), 16, groups});
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
}

}  // namespace bitgate::ref
