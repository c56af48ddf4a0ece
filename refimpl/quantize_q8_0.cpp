#include "quantize_q8_0.hpp"

#include <cmath>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/q8_round.hpp"

namespace bitgate::ref {

void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t k) {
    for (int64_t b = 0; b < k / QK8_0; ++b) {
        const float* xb = x + b * QK8_0;
        // ggml's loop, amax = MAX(amax, fabsf(v)) with MAX(a, b) = a > b ? a : b: a NaN replaces
        // the running maximum and the value after it replaces the NaN, so amax is the maximum
        // after the block's last NaN, or that NaN (sign cleared) when it is the last value. On
        // finite values it is the plain maximum. The kernel reproduces it with a ballot.
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; ++j) {
            const float a = std::fabs(xb[j]);
            amax = amax > a ? amax : a;
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_f16_rn(d);
        for (int j = 0; j < QK8_0; ++j) y[b].qs[j] = q8_roundf(xb[j] * id);
    }
}

}  // namespace bitgate::ref
