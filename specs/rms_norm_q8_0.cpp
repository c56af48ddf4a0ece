// The rms_norm_q8_0 family: the decode step's RMS norm and the Q8_0 quantization of its result,
// as the unfused pair (rms_norm_f32, quantize_q8_0) and one fused kernel.
#include <string>

#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "q8_0_rows.hpp"
#include "quantize_q8_0.cuh"
#include "rms_norm.cuh"
#include "rms_norm_q8_0.cuh"
#include "rms_norm_q8_0.hpp"

namespace {

using namespace bitgate;

FamilySpec spec() {
    return FamilySpec{
        .name = "rms_norm_q8_0",
        .summary = "RMS norm of [n][d] f32 rows (eps 1e-6) and the Q8_0 blocks of the result: decode's norm and "
                   "the quantization its projections read",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 300},
                  .doc = "tokens (rows); decode has one"},
                 {.name = "d", .lo = 32, .hi = 8192, .multiple = 32, .edges = {32, 96, 896, 3584, 5120, 8192},
                  .doc = "model width, a multiple of 32"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 32 || s["d"] % 32 != 0) return "d must be a positive multiple of 32";
            return "";
        },
        .tensors = {specs::pad40_input("x", "d"), specs::rms_norm_weight("w", "d"), specs::pad40_f32_output("y", "d"),
                    specs::q8_0_rows("xq", "d")},
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants =
            {{.name = "unfused",
              .summary = "rms_norm_f32 then quantize_q8_0 over the n rows: 2 launches",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_q8_0(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"),
                                     io.output<BlockQ8_0>("xq"), s["n"], s["d"]);
              },
              .claim = "rms_norm_q8_0",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  const auto stream = static_cast<cudaStream_t>(io.stream);
                  cuda::rms_norm_f32(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"), s["n"], s["d"],
                                     stream);
                  cuda::quantize_q8_0(io.output<float>("y"), io.output<BlockQ8_0>("xq"), s["n"] * s["d"], stream);
                  return 2;
              })},
             {.name = "fused",
              .summary = "rms_norm_q8_0: 32 warps a row up to 64 tokens, else one, each with the row's scale; a warp "
                         "normalizes a Q8_0 block a value a lane, writes y and quantizes it as quantize_q8_0 does; no "
                         "barrier",
              .model = [](const Shape& s, const HostIo& io) {
                  ref::rms_norm_q8_0(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"),
                                     io.output<BlockQ8_0>("xq"), s["n"], s["d"]);
              },
              .claim = "rms_norm_q8_0",
              .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                  cuda::rms_norm_q8_0(io.input<float>("x"), io.input<float>("w"), io.output<float>("y"),
                                      io.output<BlockQ8_0>("xq"), s["n"], s["d"], static_cast<cudaStream_t>(io.stream));
                  return 1;
              })}},
        // The fused kernel's traffic: x read once (the second pass hits L1/L2), w, y written, xq.
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["d"]) * 8.0 + double(s["d"]) * 4.0 +
                   double(s["n"]) * double(s["d"] / QK8_0) * double(sizeof(BlockQ8_0));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
