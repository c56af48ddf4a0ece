// The quantize_q8_0 family: an activation row to Q8_0 blocks.
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "quantize_q8_0.cuh"
#include "quantize_q8_0.hpp"

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
                          ref::quantize_q8_0(io.input<float>("x"), io.output<BlockQ8_0>("y"), s["k"]);
                      },
                      .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                          cuda::quantize_q8_0(io.input<float>("x"), io.output<BlockQ8_0>("y"), s["k"],
                                              static_cast<cudaStream_t>(io.stream));
                          return 1;
                      })}},
    };
}

BITGATE_FAMILY(spec());

}  // namespace
