#include "proj_q8_0.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

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
        float total = 0.0f;
        for (int warp = 0; warp < width / 32; ++warp) {
            float v[32], next[32];
            for (int l = 0; l < 32; ++l) v[l] = acc[size_t(warp * 32 + l)];
            for (int off : order.tree) {
                for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ off];
                for (int l = 0; l < 32; ++l) v[l] = next[l];
            }
            total = warp == 0 ? v[0] : total + v[0];  // lane 0's value; warp 0 first
        }
        y[r] = total;
    }
}

}  // namespace

void proj_q8_0(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t bpr, const ProjQ8Order& order,
               int threads) {
    std::vector<float> dx(static_cast<size_t>(bpr));
    for (int64_t b = 0; b < bpr; ++b) dx[size_t(b)] = f16_to_f32(xq[b].d);
    // Split rows over threads (CI has two cores) once a matrix is worth it; rows do not interact.
    const int64_t parts = n * bpr < (int64_t(1) << 16) ? 1 : std::min<int64_t>(std::max(threads, 1), n);
    std::vector<std::thread> others;
    for (int64_t p = 1; p < parts; ++p)
        others.emplace_back(proj_rows, w, xq, dx.data(), y, n * p / parts, n * (p + 1) / parts, bpr, std::cref(order));
    proj_rows(w, xq, dx.data(), y, 0, n / parts, bpr, order);
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
