#include "proj_f32.hpp"

#include <cmath>
#include <string>
#include <thread>


namespace bitgate::ref {

namespace {

void proj_f32_rows(const float* w, const float* x, float* y, int64_t r0, int64_t r1, int64_t k) {
    for (int64_t r = r0; r < r1; ++r) {
        const float* wr = w + r * k;
        float v[32], next[32];
        for (float& a : v) a = 0.0f;
        // Group q belongs to lane q % 32; walking q upwards walks each lane's groups upwards.
        for (int64_t q = 0; q < k / 4; ++q) {
            float& a = v[q % 32];
            for (int c = 0; c < 4; ++c) a = std::fma(wr[4 * q + c], x[4 * q + c], a);
        }
        for (int off = 16; off > 0; off >>= 1) {
            for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ off];
            for (int l = 0; l < 32; ++l) v[l] = next[l];
        }
        y[r] = v[0];
    }
}

}  // namespace

void proj_f32(const float* w, const float* x, float* y, int64_t n, int64_t k) {
    if (n * k < (int64_t(1) << 20) || n < 2) {
        proj_f32_rows(w, x, y, 0, n, k);
        return;
    }
    std::thread other(proj_f32_rows, w, x, y, n / 2, n, k);
    proj_f32_rows(w, x, y, 0, n / 2, k);
    other.join();
}

}  // namespace bitgate::ref
