// The add family: the residual add y = a + b of [n][d] f32 (a flat vector to the kernel).
#include <cstring>
#include <string>

#include "add.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

size_t count(const Shape& s) { return size_t(s["n"]) * size_t(s["d"]); }

FamilySpec spec() {
    return FamilySpec{
        .name = "add",
        .summary = "residual add y = a + b of [n][d] f32 (y may be a)",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 512}, .doc = "tokens (rows)"},
                 {.name = "d", .lo = 1, .hi = 4096, .edges = {1, 2, 3, 4, 5, 31, 33, 896, 3584},
                  .doc = "row length (any: n * d % 4 values take the scalar tail)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 1) return "d must be at least 1";
            return "";
        },
        .tensors = {inputs::f32_input("a", "n", "d"), inputs::f32_input("b", "n", "d"),
                    {.name = "y", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return count(s) * 4; },
                     .decode = [](const Shape& s, size_t off) {
                         const size_t i = off / 4, d = size_t(s["d"]);
                         return "row " + std::to_string(i / d) + " col " + std::to_string(i % d);
                     }}},
        .profiles = {"uniform", "normal", "outliers", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "add_f32 into a separate y: one thread per float4, one more for the n % 4 tail",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::add_f32(io.input<float>(0), io.input<float>(1), io.output<float>(0), int64_t(count(s)));
                      },
                      .claim = "add"},
                     {.name = "inplace",
                      .summary = "add_f32 with y = a (a copied into y as the preparation)",
                      .model = [](const Shape& s, const HostIo& io) {
                          float* y = io.output<float>(0);
                          std::memcpy(y, io.input<float>(0), count(s) * 4);
                          ref::add_f32(y, io.input<float>(1), y, int64_t(count(s)));
                      },
                      .claim = "add"}},
        .bytes_moved = [](const Shape& s) { return double(count(s)) * 12.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
