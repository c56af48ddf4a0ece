#include "swiglu.hpp"

#include <string>

#include "bitgate/exp.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "fma_clones.hpp"
#include "pad40_spec.hpp"
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

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "swiglu",
        .summary = "SwiGLU (g / (1 + exp_det(-g))) * u of [n][f] f32, and its twin that also writes the "
                   "quantize_pad40_t planes",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300},
                  .doc = "tokens; the planes are padded to a multiple of 64"},
                 {.name = "f", .lo = 256, .hi = 8192, .multiple = 256, .edges = {256, 4864},
                  .doc = "feed-forward width, a multiple of 32 (property shapes: of 256)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["f"] < 32 || s["f"] % 32 != 0) return "f must be a positive multiple of 32";
            return "";
        },
        .tensors = {ref::pad40_input("g", "f"), ref::pad40_input("u", "f"), ref::pad40_f32_output("out", "f"),
                    ref::pad40_qs_tensor("f"), ref::pad40_sda_tensor("f")},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "swiglu_f32 (one thread per float4) then quantize_pad40_t: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_f32(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"], s["f"]);
                  ref::quantize_pad40_t(io.output<float>(0), s["n"], s["f"], io.output<uint8_t>(1),
                                        io.output<uint32_t>(2));
              },
              .claim = "swiglu_quant"},
             {.name = "fused",
              .summary = "swiglu_quant_f32_t: one thread per 4-value word, g and u read once, out and both "
                         "planes written in one pass; grid covers the 64-padded tokens",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_quant_f32_t(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"],
                                          s["f"], io.output<uint8_t>(1), io.output<uint32_t>(2));
              },
              .claim = "swiglu_quant"}},
        // The fused kernel's traffic: g and u read once, out and both planes written once.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["f"]) * 12.0 + double(pad40_qs_bytes(s["n"], s["f"])) +
                   double(pad40_sda_bytes(s["n"], s["f"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
