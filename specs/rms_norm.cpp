// The rms_norm family: RMS norm, and its twin that also writes the quantize_pad40_t plane.
#include <string>

#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"
#include "rms_norm.cuh"
#include "rms_norm.hpp"

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "rms_norm",
        .summary = "RMS norm of [n][d] f32 rows (eps 1e-6), and its twin that also writes the quantize_pad40_t planes",
        .dims = {{.name = "n", .lo = 1, .hi = 1100, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300, 1023, 1024},
                  .doc = "tokens (rows); the planes are padded to a multiple of 64"},
                 {.name = "d", .lo = 256, .hi = 5120, .multiple = 256, .edges = {256, 3584, 5120},
                  .doc = "model width, a multiple of 32 (property shapes: of 256)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 32 || s["d"] % 32 != 0) return "d must be a positive multiple of 32";
            return "";
        },
        .tensors = {specs::pad40_input("x", "d"),
                    specs::rms_norm_weight("w", "d"),
                    specs::pad40_f32_output("y", "d"), specs::pad40_qs_tensor("d"), specs::pad40_sda_tensor("d")},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "rms_norm_f32 (8 warps a block: a row to each warp, or to all 8 up to 64 tokens) then "
                         "quantize_pad40_t: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_f32(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"), s["n"], s["d"]);
                  ref::quantize_pad40_t(io.output<float>("y"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                        io.output<uint32_t>("sda"));
              },
              .claim = "rms_norm_quant",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  const auto stream = static_cast<cudaStream_t>(io.stream);
                  cuda::rms_norm_f32(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"), s["n"], s["d"],
                                     stream);
                  cuda::quantize_pad40_t(io.output<float>("y"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                         io.output<uint32_t>("sda"), stream);
                  return 2;
              })},
             {.name = "fused",
              .summary = "rms_norm_quant_f32_t: one warp per row (4 warps a row below 1,024 tokens, each with the "
                         "row's scale), no shared memory: the scale, then the row normalized, written and quantized "
                         "4 words a lane at a time; grid covers the 64-padded tokens",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_quant_f32_t(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"), s["n"],
                                            s["d"], io.output<uint8_t>("qs"), io.output<uint32_t>("sda"));
              },
              .claim = "rms_norm_quant",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  cuda::rms_norm_quant_f32_t(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"), s["n"],
                                             s["d"], io.output<uint8_t>("qs"), io.output<uint32_t>("sda"),
                                             static_cast<cudaStream_t>(io.stream));
                  return 1;
              })}},
        // The fused kernel's traffic: x read once (the second pass hits L2), w, y, both planes.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["d"]) * 8.0 + double(s["d"]) * 4.0 +
                   double(pad40_qs_bytes(s["n"], s["d"])) + double(pad40_sda_bytes(s["n"], s["d"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
