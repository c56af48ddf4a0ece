// The proj_f32 family: the decode projection GEMV with f32 weights.
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "proj_f32.cuh"
#include "proj_f32.hpp"

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "proj_f32",
        .summary = "decode projection GEMV with f32 weights [n][k] and an f32 activation",
        .dims = {{.name = "n", .lo = 1, .hi = 4096, .edges = {1, 2, 3, 4, 5, 1023, 1024, 1025},
                  .doc = "rows (output features); one row (a warp) per CUDA block"},
                 {.name = "k", .lo = 4, .hi = 8192, .multiple = 4, .edges = {4, 8, 124, 128, 132, 256, 4096},
                  .doc = "input features, a multiple of 4 (float4 groups; lanes wrap at k = 128)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1 || s["n"] > (int64_t(1) << 24)) return "n must be in [1, 2^24]";
            if (s["k"] < 4 || s["k"] % 4 != 0) return "k must be a positive multiple of 4";
            return "";
        },
        .tensors =
            {
                inputs::f32_input("x", "", "k"),
                {.name = "w", .role = Role::input, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["n"] * s["k"]) * 4; },
                 .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
                     inputs::fill_f32(out, r, uint64_t(s["k"]));
                 },
                 .decode = [](const Shape& s, size_t off) {
                     const int64_t i = int64_t(off / 4);
                     return "row " + std::to_string(i / s["k"]) + " col " + std::to_string(i % s["k"]);
                 }},
                {.name = "y", .role = Role::output, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                 .decode = [](const Shape&, size_t off) { return "row " + std::to_string(off / 4); }},
            },
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "a warp per row and per block, 4 float4 loads a lane in flight, fmaf per component, xor tree",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::proj_f32(io.input<float>("w"), io.input<float>("x"), io.output<float>("y"), s["n"], s["k"]);
                      },
                      .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                          cuda::proj_f32(io.input<float>("w"), io.input<float>("x"), io.output<float>("y"), s["n"],
                                         s["k"], static_cast<cudaStream_t>(io.stream));
                          return 1;
                      })}},
        .bytes_moved = [](const Shape& s) { return double(s["n"] * s["k"] + s["k"] + s["n"]) * 4.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
