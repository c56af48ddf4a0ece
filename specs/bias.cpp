// The bias family: y[r][c] = x[r][c] + bias[c] over [n][d] f32 (in place in the forward).
#include <cstring>
#include <string>

#include "bias.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

size_t count(const Shape& s) { return size_t(s["n"]) * size_t(s["d"]); }

FamilySpec spec() {
    return FamilySpec{
        .name = "bias",
        .summary = "bias add y[r][c] = x[r][c] + bias[c] of [n][d] f32 (y may be x)",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 512}, .doc = "tokens (rows)"},
                 {.name = "d", .lo = 1, .hi = 4096, .edges = {1, 3, 4, 5, 64, 128, 256, 512, 896, 3584},
                  .doc = "row length (a multiple of 4 takes the float4 path)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 1) return "d must be at least 1";
            return "";
        },
        .tensors = {inputs::f32_input("x", "n", "d"), inputs::f32_input("bias", "", "d"),
                    {.name = "y", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return count(s) * 4; },
                     .decode = [](const Shape& s, size_t off) {
                         const size_t i = off / 4, d = size_t(s["d"]);
                         return "row " + std::to_string(i / d) + " col " + std::to_string(i % d);
                     }}},
        .profiles = {"uniform", "normal", "outliers", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "bias_f32_to into a separate y: one thread per float4 (d % 4 == 0) or per value",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::bias_f32_to(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"], s["d"]);
                      },
                      .claim = "bias"},
                     {.name = "inplace",
                      .summary = "bias_f32 in place on a copy of x (the copy is the preparation)",
                      .model = [](const Shape& s, const HostIo& io) {
                          float* y = io.output<float>(0);
                          std::memcpy(y, io.input<float>(0), count(s) * 4);
                          ref::bias_f32(y, io.input<float>(1), s["n"], s["d"]);
                      },
                      .claim = "bias"}},
        .bytes_moved = [](const Shape& s) { return double(count(s)) * 8.0 + double(s["d"]) * 4.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
