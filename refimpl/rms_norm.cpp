#include "rms_norm.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_spec.hpp"
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

void fill_rms_norm_weight(const Shape&, const GenRequest& r, std::span<uint8_t> out) {
    const inputs::Stream st(r);
    for (size_t i = 0; i < out.size() / 4; ++i) {
        const float v = 1.0f + 0.5f * st.uniform(i);
        std::memcpy(out.data() + i * 4, &v, 4);
    }
}

}  // namespace bitgate::ref

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "rms_norm",
        .summary = "RMS norm of [n][d] f32 rows (eps 1e-6), and its twin that also writes the quantize_pad40_t planes",
        .dims = {{.name = "n", .lo = 1, .hi = 700, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300},
                  .doc = "tokens (rows); the planes are padded to a multiple of 64"},
                 {.name = "d", .lo = 256, .hi = 5120, .multiple = 256, .edges = {256, 3584, 5120},
                  .doc = "model width, a multiple of 32 (property shapes: of 256)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 32 || s["d"] % 32 != 0) return "d must be a positive multiple of 32";
            return "";
        },
        .tensors = {ref::pad40_input("x", "d"),
                    {.name = "w", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["d"]) * 4; },
                     .generate = ref::fill_rms_norm_weight},
                    ref::pad40_f32_output("y", "d"), ref::pad40_qs_tensor("d"), ref::pad40_sda_tensor("d")},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "rms_norm_f32 (one warp per row, 8 rows per block) then quantize_pad40_t: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_f32(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"], s["d"]);
                  ref::quantize_pad40_t(io.output<float>(0), s["n"], s["d"], io.output<uint8_t>(1),
                                        io.output<uint32_t>(2));
              },
              .claim = "rms_norm_quant"},
             {.name = "fused",
              .summary = "rms_norm_quant_f32_t: per-row scale by one warp, barrier, then the block's 8 rows "
                         "normalized, written and quantized in one flat pass; grid covers the 64-padded tokens",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_quant_f32_t(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"],
                                            s["d"], io.output<uint8_t>(1), io.output<uint32_t>(2));
              },
              .claim = "rms_norm_quant"}},
        // The fused kernel's traffic: x read once (the second pass hits L2), w, y, both planes.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["d"]) * 8.0 + double(s["d"]) * 4.0 +
                   double(pad40_qs_bytes(s["n"], s["d"])) + double(pad40_sda_bytes(s["n"], s["d"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
