#include "proj_q8_0.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "bitgate/f16.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "quantize_q8_0.hpp"

namespace bitgate::ref {

int32_t q8_0_sumi(const BlockQ8_0& w, const BlockQ8_0& x) {
    int32_t s = 0;
    for (int j = 0; j < QK8_0; ++j) s += int32_t(w.qs[j]) * int32_t(x.qs[j]);
    return s;
}

namespace {

// The warps' xor trees and the cross-warp sum over the per-thread accumulators of one row.
float reduce_row(const float* acc, const ProjQ8Order& order) {
    float total = 0.0f;
    for (int warp = 0; warp < order.width / 32; ++warp) {
        float v[32], next[32];
        for (int l = 0; l < 32; ++l) v[l] = acc[warp * 32 + l];
        for (int off : order.tree) {
            for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ off];
            for (int l = 0; l < 32; ++l) v[l] = next[l];
        }
        total = warp == 0 ? v[0] : total + v[0];  // lane 0's value; warp 0 first
    }
    return total;
}

// Rows [r0, r1), performed as the kernel does: W per-thread accumulators, then each logical warp's
// xor tree lane by lane, then the warps in order.
void proj_rows(const BlockQ8_0* w, const BlockQ8_0* xq, const float* dx, float* y, int64_t r0, int64_t r1,
               int64_t bpr, const ProjQ8Order& order) {
    const int width = order.width;
    std::vector<float> acc(static_cast<size_t>(width));
    for (int64_t r = r0; r < r1; ++r) {
        const BlockQ8_0* row = w + r * bpr;
        for (float& a : acc) a = 0.0f;
        // Block b belongs to thread b % W; walking b upwards walks each thread's blocks upwards.
        for (int64_t b = 0; b < bpr; ++b) {
            const float d = f16_to_f32(row[b].d) * dx[b];
            float& a = acc[size_t(b % width)];
            a = std::fma(static_cast<float>(q8_0_sumi(row[b], xq[b])), d, a);
        }
        y[r] = reduce_row(acc.data(), order);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// f16_to_f32 of every half, from f16_to_f32 itself: equal by construction, and one load.
const float* f16_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t h = 0; h < 65536; ++h) t[h] = f16_to_f32(uint16_t(h));
        return t;
    }();
    return table.data();
}

// reduce_row with each warp's 32 lanes in four vectors: every level adds lane l ^ off to lane l
// (lane l's value first, as the definition writes it), all 32 lanes, in the order's sequence.
// Offsets other than the five a tree can have are left to reduce_row.
__attribute__((target("avx2"))) float reduce_row_avx2(const float* acc, const ProjQ8Order& order) {
    for (int off : order.tree)
        if (off != 1 && off != 2 && off != 4 && off != 8 && off != 16) return reduce_row(acc, order);
    float total = 0.0f;
    for (int warp = 0; warp < order.width / 32; ++warp) {
        // Four named vectors, not an array: the compiler then keeps them in registers.
        const float* a = acc + warp * 32;
        __m256 v0 = _mm256_loadu_ps(a), v1 = _mm256_loadu_ps(a + 8), v2 = _mm256_loadu_ps(a + 16),
               v3 = _mm256_loadu_ps(a + 24);
        for (int off : order.tree) {
            __m256 p0, p1, p2, p3;  // the partners of v0..v3's lanes
            switch (off) {
                case 16: p0 = v2, p1 = v3, p2 = v0, p3 = v1; break;
                case 8: p0 = v1, p1 = v0, p2 = v3, p3 = v2; break;
                case 4:
                    p0 = _mm256_permute2f128_ps(v0, v0, 1), p1 = _mm256_permute2f128_ps(v1, v1, 1);
                    p2 = _mm256_permute2f128_ps(v2, v2, 1), p3 = _mm256_permute2f128_ps(v3, v3, 1);
                    break;
                case 2:
                    p0 = _mm256_permute_ps(v0, 0x4e), p1 = _mm256_permute_ps(v1, 0x4e);
                    p2 = _mm256_permute_ps(v2, 0x4e), p3 = _mm256_permute_ps(v3, 0x4e);
                    break;
                default:
                    p0 = _mm256_permute_ps(v0, 0xb1), p1 = _mm256_permute_ps(v1, 0xb1);
                    p2 = _mm256_permute_ps(v2, 0xb1), p3 = _mm256_permute_ps(v3, 0xb1);
                    break;
            }
            v0 = _mm256_add_ps(v0, p0), v1 = _mm256_add_ps(v1, p1);
            v2 = _mm256_add_ps(v2, p2), v3 = _mm256_add_ps(v3, p3);
        }
        const float lane0 = _mm256_cvtss_f32(v0);
        total = warp == 0 ? lane0 : total + lane0;  // warp 0 first
    }
    return total;
}

// The steps of the two spellings: the exact int32 sums of eight blocks b .. b+7 against x.
struct SumsAvx2 {
    const int16_t* x16;  // the activation's quants widened, 32 per block
    __attribute__((target("avx2"))) __m256i operator()(const BlockQ8_0* row, int64_t b) const {
        __m256i d[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            const int8_t* q = row[b + j].qs;
            const int16_t* x = x16 + (b + j) * QK8_0;
            const __m256i lo = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
            const __m256i hi = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
            d[j] = _mm256_add_epi32(_mm256_madd_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))),
                                    _mm256_madd_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16))));
        }
        return hsum8(d);
    }
    // Eight vectors of eight partial sums -> the eight totals, in block order.
    __attribute__((target("avx2"))) static __m256i hsum8(const __m256i (&d)[8]) {
        const __m256i h0 = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]), _mm256_hadd_epi32(d[2], d[3]));
        const __m256i h1 = _mm256_hadd_epi32(_mm256_hadd_epi32(d[4], d[5]), _mm256_hadd_epi32(d[6], d[7]));
        return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20), _mm256_permute2x128_si256(h0, h1, 0x31));
    }
};

// vpdpbusd multiplies unsigned bytes by signed ones: the weights go in as w + 128 (w ^ 0x80), so
// a block's lanes add up to sumi + 128 * (the sum of x's quants), taken off after.
struct SumsVnni {
    const BlockQ8_0* xq;
    const int32_t* x128;  // 128 * the sum of each activation block's quants
    __attribute__((target("avx2,avx512vl,avx512vnni"))) __m256i operator()(const BlockQ8_0* row, int64_t b) const {
        const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
        __m256i d[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            const __m256i wu = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[b + j].qs)), flip);
            d[j] = _mm256_dpbusd_epi32(_mm256_setzero_si256(), wu,
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[b + j].qs)));
        }
        return _mm256_sub_epi32(SumsAvx2::hsum8(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x128 + b)));
    }
};

// The rows with vectors: eight blocks at a time, which belong to eight consecutive threads (b %
// W for b a multiple of 8, W a multiple of 32), so each lane is one thread's accumulator and takes
// the definition's fma on the definition's floats: the exact int32 sum as a float (exact below
// 2^24), times RN(d_w * d_x). The trees run the same adds on the same lanes.
template <class Sums>
__attribute__((target("avx2,fma"))) void proj_rows_simd(const Sums& sums, const BlockQ8_0* w, const BlockQ8_0* xq,
                                                        const float* dx, float* y, int64_t r0, int64_t r1,
                                                        int64_t bpr, const ProjQ8Order& order) {
    const int width = order.width;
    const float* table = f16_table();
    alignas(32) float acc[128];
    const int64_t b8 = bpr / 8 * 8;
    for (int64_t r = r0; r < r1; ++r) {
        const BlockQ8_0* row = w + r * bpr;
        for (int i = 0; i < width; i += 8) _mm256_store_ps(acc + i, _mm256_setzero_ps());
        int lane = 0;  // b % width, kept by counting (a 64-bit division a step cost more than the rest)
        for (int64_t b = 0; b < b8; b += 8, lane = lane + 8 == width ? 0 : lane + 8) {
            const __m256i sumi = sums(row, b);
            // Eight scalar loads beat two gathers here.
            const __m256 dw = _mm256_setr_ps(table[row[b].d], table[row[b + 1].d], table[row[b + 2].d],
                                             table[row[b + 3].d], table[row[b + 4].d], table[row[b + 5].d],
                                             table[row[b + 6].d], table[row[b + 7].d]);
            const __m256 dd = _mm256_mul_ps(dw, _mm256_loadu_ps(dx + b));
            float* a = acc + lane;
            _mm256_store_ps(a, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi), dd, _mm256_load_ps(a)));
        }
        for (int64_t b = b8; b < bpr; ++b) {
            const float d = table[row[b].d] * dx[b];
            float& a = acc[b % width];  // the tail: at most 7 blocks
            a = std::fma(static_cast<float>(q8_0_sumi(row[b], xq[b])), d, a);
        }
        y[r] = reduce_row_avx2(acc, order);
    }
}
#endif

}  // namespace

void proj_q8_0(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t bpr, const ProjQ8Order& order,
               int threads, HostPath path) {
    if (path != HostPath::scalar && !host_path_available(path))
        throw std::invalid_argument(std::string("proj_q8_0: this CPU has no ") + host_path_name(path) + " path");
    std::vector<float> dx(static_cast<size_t>(bpr));
    for (int64_t b = 0; b < bpr; ++b) dx[size_t(b)] = f16_to_f32(xq[b].d);
    if (threads <= 0) threads = int(std::min(16u, std::max(1u, std::thread::hardware_concurrency())));
    // Split rows over threads once a matrix is worth it; rows do not interact.
    const int64_t parts = n * bpr < (int64_t(1) << 16) ? 1 : std::min<int64_t>(threads, n);
    std::function<void(int64_t, int64_t)> rows = [&](int64_t r0, int64_t r1) {
        proj_rows(w, xq, dx.data(), y, r0, r1, bpr, order);
    };
#if defined(__x86_64__) && defined(__GNUC__)
    // The vector rows take the kernels' widths (whole warps, at most 128 threads).
    std::vector<int16_t> x16;
    std::vector<int32_t> x128;
    const bool widths = order.width % 32 == 0 && order.width <= 128;
    const bool vnni = widths && (path == HostPath::avx512_vnni ||
                                 (path == HostPath::fastest && host_path_available(HostPath::avx512_vnni)));
    const bool avx2 = widths && !vnni && (path == HostPath::avx2 || path == HostPath::fastest) &&
                      host_path_available(HostPath::avx2);
    if (vnni) {
        x128.resize(size_t(bpr) + 8);
        for (int64_t b = 0; b < bpr; ++b) {
            int32_t sum = 0;
            for (int j = 0; j < QK8_0; ++j) sum += xq[b].qs[j];
            x128[size_t(b)] = 128 * sum;
        }
        rows = [&](int64_t r0, int64_t r1) {
            proj_rows_simd(SumsVnni{xq, x128.data()}, w, xq, dx.data(), y, r0, r1, bpr, order);
        };
    } else if (avx2) {
        x16.resize(size_t(bpr * QK8_0));
        for (int64_t b = 0; b < bpr; ++b)
            for (int j = 0; j < QK8_0; ++j) x16[size_t(b * QK8_0 + j)] = xq[b].qs[j];
        rows = [&](int64_t r0, int64_t r1) {
            proj_rows_simd(SumsAvx2{x16.data()}, w, xq, dx.data(), y, r0, r1, bpr, order);
        };
    }
#endif
    std::vector<std::thread> others;
    for (int64_t p = 1; p < parts; ++p) others.emplace_back(rows, n * p / parts, n * (p + 1) / parts);
    rows(0, n / parts);
    for (auto& t : others) t.join();
}

void proj_q8_0_group(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                     const ProjQ8Order& order) {
    const int64_t bpr = k / QK8_0;
    std::vector<BlockQ8_0> xq(static_cast<size_t>(bpr));
    quantize_q8_0(x, xq.data(), k);
    for (int64_t m = 0; m < g; ++m) proj_q8_0(w + m * n * bpr, xq.data(), y + m * n, n, bpr, order);
}

}  // namespace bitgate::ref
