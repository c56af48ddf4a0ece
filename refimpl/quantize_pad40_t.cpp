#include "quantize_pad40_t.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_spec.hpp"

namespace bitgate::ref {

uint32_t pad40_quantize_chunk(const float* e, int8_t* q) {
    // fmax drops a NaN operand, as the kernel's fmaxf tree does; starting from the first value
    // (not from 0) makes a chunk of 32 NaNs give NaN, as that tree gives. Finite values: the maximum.
    float am = std::fabs(e[0]);
    for (int j = 1; j < kPad40Chunk; ++j) am = std::fmax(am, std::fabs(e[j]));
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

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "quantize_pad40_t",
        .summary = "prefill activation [n][d] f32 -> transposed, swizzled, 64-token-padded int8 plane (qs, sda)",
        .dims = {{.name = "n", .lo = 1, .hi = 1100, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300},
                  .doc = "tokens; the planes are padded to a multiple of 64"},
                 {.name = "d", .lo = 256, .hi = 8192, .multiple = 256, .edges = {256, 3584, 4864, 5120},
                  .doc = "features, a multiple of 32 (property shapes: of 256)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 32 || s["d"] % 32 != 0) return "d must be a positive multiple of 32";
            return "";
        },
        .tensors = {ref::pad40_input("x", "d"), ref::pad40_qs_tensor("d"), ref::pad40_sda_tensor("d")},
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "one thread per 4-value word, 8-lane shuffle max and sum, rintf, zeros past n",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::quantize_pad40_t(io.input<float>(0), s["n"], s["d"], io.output<uint8_t>(0),
                                                io.output<uint32_t>(1));
                      }}},
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["d"]) * 4.0 + double(pad40_qs_bytes(s["n"], s["d"])) +
                   double(pad40_sda_bytes(s["n"], s["d"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
