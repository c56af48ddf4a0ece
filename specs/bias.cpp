// The bias family: y[r][c] = x[r][c] + bias[c] over [n][d] f32 (in place in the forward).
#include <cstring>
#include <string>

#include "bias.cuh"
#include "bias.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"

namespace {

using namespace bitgate;

size_t count(const Shape& s) { return size_t(s["n"]) * size_t(s["d"]); }

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

int launch_v1(const Shape& s, const DeviceIo& io) {
    cuda::bias_f32_to(io.input<float>("x"), io.input<float>("bias"), io.output<float>("y"), s["n"], s["d"],
                      stream_of(io));
    return 1;
}

// The in-place call as the forward makes it: x copied into y (preparation), then y += bias.
int copy_x(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<float>("y"), io.input<float>("x"), count(s) * 4, stream_of(io));
    return 0;
}

int launch_inplace(const Shape& s, const DeviceIo& io) {
    cuda::bias_f32(io.output<float>("y"), io.input<float>("bias"), s["n"], s["d"], stream_of(io));
    return 1;
}
#endif

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
                          ref::bias_f32_to(io.input<float>("x"), io.input<float>("bias"), io.output<float>("y"), s["n"], s["d"]);
                      },
                      .claim = "bias",
                      .launch = BITGATE_ON_DEVICE(launch_v1)},
                     {.name = "inplace",
                      .summary = "bias_f32 in place on a copy of x (the copy is the preparation)",
                      .model = [](const Shape& s, const HostIo& io) {
                          float* y = io.output<float>("y");
                          std::memcpy(y, io.input<float>("x"), count(s) * 4);
                          ref::bias_f32(y, io.input<float>("bias"), s["n"], s["d"]);
                      },
                      .claim = "bias",
                      .launch = BITGATE_ON_DEVICE(launch_inplace),
                      .prepare = BITGATE_ON_DEVICE(copy_x)}},
        .bytes_moved = [](const Shape& s) { return double(count(s)) * 8.0 + double(s["d"]) * 4.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
