// The quantize_pad40_t family: a prefill activation to the int8 plane of the prefill GEMM.
#include <string>

#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"

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
        .tensors = {specs::pad40_input("x", "d"), specs::pad40_qs_tensor("d"), specs::pad40_sda_tensor("d")},
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "one thread per 4-value word, 8-lane shuffle max and sum, rintf, zeros past n",
                      .model = [](const Shape& s, const HostIo& io) {
                          ref::quantize_pad40_t(io.input<float>("x"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                                io.output<uint32_t>("sda"));
                      },
                      .launch = BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                          cuda::quantize_pad40_t(io.input<float>("x"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                                 io.output<uint32_t>("sda"), static_cast<cudaStream_t>(io.stream));
                          return 1;
                      })}},
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(s["d"]) * 4.0 + double(pad40_qs_bytes(s["n"], s["d"])) +
                   double(pad40_sda_bytes(s["n"], s["d"]));
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
