#include "quantize_pad40_t.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::ref {

namespace {

float max_dropping_nan(float a, float b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    return a < b ? b : a;
}

}  // namespace

uint32_t pad40_quantize_chunk(const float* e, int8_t* q) {
    // The kernels' fmaxf (PTX max.f32) drops a NaN operand, quiet or signalling; starting from
    // the first value (not from 0) makes a chunk of 32 NaNs give NaN, as their tree gives. Not
    // std::fmax: glibc's returns a NaN when either operand is a signalling NaN.
    float am = std::fabs(e[0]);
    for (int j = 1; j < kPad40Chunk; ++j) am = max_dropping_nan(am, std::fabs(e[j]));
    const float d = am / 127.0f;
    const float di = d != 0.0f ? 1.0f / d : 0.0f;
    int32_t ssum = 0;
    for (int j = 0; j < kPad40Chunk; ++j) {
        q[j] = pad40_round(e[j] * di);
        ssum += q[j];
    }
    return pad40_sda_word(f32_to_f16_rn(d), ssum);
}

void pad40_store_chunk(uint8_t* qs, uint32_t* sda, int64_t t, int64_t c, int64_t nchunk, const int8_t* q,
                       uint32_t sda_word) {
    for (uint32_t u = 0; u < kPad40Words; ++u) std::memcpy(qs + pad40_qs_at(t, c, u, nchunk), q + 4 * u, 4);
    sda[pad40_sda_at(t, c, nchunk)] = sda_word;
}

void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda) {
    const int64_t nchunk = pad40_nchunk(d);
    const int8_t zeros[kPad40Chunk] = {};
    int8_t q[kPad40Chunk];
    for (int64_t t = 0; t < pad40_tokens(n); ++t) {
        for (int64_t c = 0; c < nchunk; ++c) {
            if (t < n) pad40_store_chunk(qs, sda, t, c, nchunk, q, pad40_quantize_chunk(x + t * d + c * kPad40Chunk, q));
            else pad40_store_chunk(qs, sda, t, c, nchunk, zeros, 0u);
        }
    }
}

}  // namespace bitgate::ref
