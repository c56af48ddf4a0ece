#include "quantize_q8_0.hpp"

#include <cmath>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/q8_round.hpp"
#include "bitgate/spec.hpp"

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

namespace {

using namespace bitgate;

std::string decode_block(const Shape&, size_t off) {
    const size_t b = off / sizeof(BlockQ8_0), w = off % sizeof(BlockQ8_0);
    return "block " + std::to_string(b) + (w < 2 ? " d byte " + std::to_string(w) : " qs[" + std::to_string(w - 2) + "]");
}

FamilySpec spec() {
    return FamilySpec{
        .name = "quantize_q8_0",
        .summary = "decode activation row (f32) -> Q8_0 blocks, bytes of ggml's reference quantizer",
        .dims = {{.name = "k", .lo = 32, .hi = 65536, .multiple = 32,
                  .edges = {32, 64, 96, 160, 896, 3584, 4096, 65536}, .doc = "row length, a multiple of 32"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["k"] <= 0 || s["k"] % QK8_0 != 0) return "k must be a positive multiple of 32";
            return "";
        },
        .tensors =
            {
                inputs::f32_input("x", "", "k"),
                {.name = "y", .role = Role::output, .elem = Elem::q8_0,
                 .bytes = [](const Shape& s) { return size_t(s["k"] / QK8_0) * sizeof(BlockQ8_0); },
                 .decode = decode_block},
            },
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "one warp per Q8_0 block: shuffle max, IEEE division, roundf",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::quantize_q8_0(io.input<float>(0), io.output<BlockQ8_0>(0), s["k"]);
                      }}},
    };
}

BITGATE_FAMILY(spec());

}  // namespace
