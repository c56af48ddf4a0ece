#include "swiglu.hpp"

#include <string>

#include "bitgate/exp.hpp"
#include "bitgate/pad40.hpp"
#include "fma_clones.hpp"
#include "quantize_pad40_t.hpp"

namespace bitgate::ref {

float swiglu_value(float g, float u) { return (g / (1.0f + exp_det(-g))) * u; }

namespace {

BITGATE_FMA_CLONES void swiglu_span(const float* g, const float* u, float* out, int64_t count) {
    for (int64_t i = 0; i < count; ++i) out[i] = (g[i] / (1.0f + exp_det(-g[i]))) * u[i];
}

}  // namespace

void swiglu_f32(const float* g, const float* u, float* out, int64_t n, int64_t f) { swiglu_span(g, u, out, n * f); }

void swiglu_quant_f32_t(const float* g, const float* u, float* out, int64_t n, int64_t f, uint8_t* qs,
                        uint32_t* sda) {
    const int64_t nchunk = pad40_nchunk(f);
    const int8_t zeros[kPad40Chunk] = {};
    int8_t q[kPad40Chunk];
    for (int64_t t = 0; t < pad40_tokens(n); ++t) {
        for (int64_t c = 0; c < nchunk; ++c) {
            if (t >= n) {
                pad40_store_chunk(qs, sda, t, c, nchunk, zeros, 0u);
                continue;
            }
            const int64_t i = t * f + c * kPad40Chunk;
            swiglu_span(g + i, u + i, out + i, kPad40Chunk);
            pad40_store_chunk(qs, sda, t, c, nchunk, q, pad40_quantize_chunk(out + i, q));
        }
    }
}

}  // namespace bitgate::ref
