// The swiglu_q8_0 family: decode's SwiGLU and the Q8_0 quantization of its result, as the unfused
// pair (swiglu_f32, quantize_q8_0) and one fused kernel.
#include <string>

#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "q8_0_rows.hpp"
#include "quantize_q8_0.cuh"
#include "swiglu.cuh"
#include "swiglu_q8_0.cuh"
#include "swiglu_q8_0.hpp"

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "swiglu_q8_0",
        .summary = "SwiGLU (g / (1 + exp_det(-g))) * u of [n][f] f32 and the Q8_0 blocks of the result: decode's "
                   "SwiGLU and the quantization the down projection reads",
        // Property shapes stop at 300 x 8192 (the host model's exp_det per value is the slow part:
        // up to 600 x 20480 did not finish 1,000 shapes in 300 s on the device machine); the
        // catalogs hold the 7B width, 18944.
        .dims = {{.name = "n", .lo = 1, .hi = 300, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300},
                  .doc = "tokens; decode has one"},
                 {.name = "f", .lo = 32, .hi = 8192, .multiple = 32, .edges = {32, 96, 4864, 8192},
                  .doc = "feed-forward width, a multiple of 32 (property shapes: up to 8192)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["f"] < 32 || s["f"] % 32 != 0) return "f must be a positive multiple of 32";
            return "";
        },
        .tensors = {specs::pad40_input("g", "f"), specs::pad40_input("u", "f"), specs::pad40_f32_output("out", "f"),
                    specs::q8_0_rows("xq", "f")},
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "swiglu_f32 then quantize_q8_0 over the n rows: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_q8_0(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"),
                                   io.output<BlockQ8_0>("xq"), s["n"], s["f"]);
              },
              .claim = "swiglu_q8_0",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  const auto stream = static_cast<cudaStream_t>(io.stream);
                  cuda::swiglu_f32(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"), s["n"], s["f"],
                                   stream);
                  cuda::quantize_q8_0(io.output<float>("out"), io.output<BlockQ8_0>("xq"), s["n"] * s["f"], stream);
                  return 2;
              })},
             {.name = "fused",
              .summary = "swiglu_q8_0: one warp per Q8_0 block, a value a lane: SwiGLU as swiglu_f32, written, then "
                         "quantized as quantize_q8_0 does; no shared memory",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_q8_0(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"),
                                   io.output<BlockQ8_0>("xq"), s["n"], s["f"]);
              },
              .claim = "swiglu_q8_0",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  cuda::swiglu_q8_0(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"),
                                    io.output<BlockQ8_0>("xq"), s["n"], s["f"], static_cast<cudaStream_t>(io.stream));
                  return 1;
              })}},
        // The fused kernel's traffic: g and u read once, out and xq written once.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["f"]) * 12.0 +
                   double(s["n"]) * double(s["f"] / QK8_0) * double(sizeof(BlockQ8_0));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
