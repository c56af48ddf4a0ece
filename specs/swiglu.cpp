// The swiglu family: SwiGLU, and its twin that also writes the quantize_pad40_t plane.
#include <string>

#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"
#include "swiglu.cuh"
#include "swiglu.hpp"

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
        .tensors = {specs::pad40_input("g", "f"), specs::pad40_input("u", "f"), specs::pad40_f32_output("out", "f"),
                    specs::pad40_qs_tensor("f"), specs::pad40_sda_tensor("f")},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "swiglu_f32 (one thread per float4) then quantize_pad40_t: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_f32(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"), s["n"], s["f"]);
                  ref::quantize_pad40_t(io.output<float>("out"), s["n"], s["f"], io.output<uint8_t>("qs"),
                                        io.output<uint32_t>("sda"));
              },
              .claim = "swiglu_quant",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  const auto stream = static_cast<cudaStream_t>(io.stream);
                  cuda::swiglu_f32(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"), s["n"], s["f"],
                                   stream);
                  cuda::quantize_pad40_t(io.output<float>("out"), s["n"], s["f"], io.output<uint8_t>("qs"),
                                         io.output<uint32_t>("sda"), stream);
                  return 2;
              })},
             {.name = "fused",
              .summary = "swiglu_quant_f32_t: one thread per 4-value word, g and u read once, out and both "
                         "planes written in one pass; grid covers the 64-padded tokens",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::swiglu_quant_f32_t(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"), s["n"],
                                          s["f"], io.output<uint8_t>("qs"), io.output<uint32_t>("sda"));
              },
              .claim = "swiglu_quant",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  cuda::swiglu_quant_f32_t(io.input<float>("g"), io.input<float>("u"), io.output<float>("out"), s["n"],
                                           s["f"], io.output<uint8_t>("qs"), io.output<uint32_t>("sda"),
                                           static_cast<cudaStream_t>(io.stream));
                  return 1;
              })}},
        // The fused kernel's traffic: g and u read once, out and both planes written once.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["f"]) * 12.0 + double(pad40_qs_bytes(s["n"], s["f"])) +
                   double(pad40_sda_bytes(s["n"], s["f"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
