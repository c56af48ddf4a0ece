// The add family: the residual add y = a + b of [n][d] f32 (a flat vector to the kernel).
#include <cstring>
#include <string>

#include "add.cuh"
#include "add.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"

namespace {

using namespace bitgate;

size_t count(const Shape& s) { return size_t(s["n"]) * size_t(s["d"]); }

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// The family's n x d values are one flat vector to the kernel.
int launch_v1(const Shape& s, const DeviceIo& io) {
    cuda::add_f32(io.input<float>("a"), io.input<float>("b"), io.output<float>("y"), int64_t(count(s)), stream_of(io));
    return 1;
}

// The in-place call as the forward makes it (the residual stream is a): a copied into y, then y += b.
int copy_a(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<float>("y"), io.input<float>("a"), count(s) * 4, stream_of(io));
    return 0;
}

int launch_inplace(const Shape& s, const DeviceIo& io) {
    cuda::add_f32(io.output<float>("y"), io.input<float>("b"), io.output<float>("y"), int64_t(count(s)), stream_of(io));
    return 1;
}
#endif

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
                          ref::add_f32(io.input<float>("a"), io.input<float>("b"), io.output<float>("y"), int64_t(count(s)));
                      },
                      .claim = "add",
                      .launch = BITGATE_ON_DEVICE(launch_v1)},
                     {.name = "inplace",
                      .summary = "add_f32 with y = a (a copied into y as the preparation)",
                      .model = [](const Shape& s, const HostIo& io) {
                          float* y = io.output<float>("y");
                          std::memcpy(y, io.input<float>("a"), count(s) * 4);
                          ref::add_f32(y, io.input<float>("b"), y, int64_t(count(s)));
                      },
                      .claim = "add",
                      .launch = BITGATE_ON_DEVICE(launch_inplace),
                      .prepare = BITGATE_ON_DEVICE(copy_a)}},
        .bytes_moved = [](const Shape& s) { return double(count(s)) * 12.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
