#include "rms_norm.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "bitgate/pad40.hpp"
#include "quantize_pad40_t.hpp"

namespace bitgate::ref {

float rms_norm_scale(const float* x, int64_t d) {
    float lane[32] = {};
    for (int64_t g = 0; g < d / 4; ++g) {
        float& acc = lane[g % 32];  // lane l owns groups l, l+32, ...; ascending g is its order
        for (int j = 0; j < 4; ++j) acc = acc + x[4 * g + j] * x[4 * g + j];
    }
    for (int off = 16; off > 0; off >>= 1) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ off];
        for (int l = 0; l < 32; ++l) lane[l] = next[l];
    }
    return 1.0f / std::sqrt(lane[0] / float(d) + kRmsEps);
}

void rms_norm_f32(const float* x, const float* w, float* y, int64_t n, int64_t d) {
    for (int64_t t = 0; t < n; ++t) {
        const float* xr = x + t * d;
        const float scale = rms_norm_scale(xr, d);
        for (int64_t i = 0; i < d; ++i) y[t * d + i] = (xr[i] * scale) * w[i];
    }
}

void rms_norm_quant_f32_t(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs,
                          uint32_t* sda) {
    const int64_t nchunk = pad40_nchunk(d);
    const int8_t zeros[kPad40Chunk] = {};
    int8_t q[kPad40Chunk];
    float e[kPad40Chunk];
    for (int64_t t = 0; t < pad40_tokens(n); ++t) {
        if (t >= n) {
            for (int64_t c = 0; c < nchunk; ++c) pad40_store_chunk(qs, sda, t, c, nchunk, zeros, 0u);
            continue;
        }
        const float* xr = x + t * d;
        const float scale = rms_norm_scale(xr, d);
        for (int64_t c = 0; c < nchunk; ++c) {
            for (int j = 0; j < kPad40Chunk; ++j) {
                const int64_t i = c * kPad40Chunk + j;
                e[j] = (xr[i] * scale) * w[i];
                y[t * d + i] = e[j];
            }
            pad40_store_chunk(qs, sda, t, c, nchunk, q, pad40_quantize_chunk(e, q));
        }
    }
}

}  // namespace bitgate::ref
