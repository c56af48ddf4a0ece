// The proj_q8_0_add family: a decode projection with the add epilogue, y = W x + a, where a is the
// q/k/v bias or the residual stream. The fused kernel adds a after the row's whole sum with one
// rounding, so its bytes are those of the projection followed by the separate add kernel: the
// claim fused == separate, held on every shape (docs/proj_q8_0_add.md).
#include <cstring>
#include <string>

#include "add.cuh"
#include "add.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"
#include "proj_q8_0.cuh"
#include "proj_q8_0.hpp"

namespace {

using namespace bitgate;

size_t xq_bytes(const Shape& s) { return size_t(s["k"] / QK8_0) * sizeof(BlockQ8_0); }

// The model of every variant: v2's projection (its reduction order), then y = y + a.
void model(const Shape& s, const HostIo& io) {
    const int64_t n = s["n"], k = s["k"];
    float* y = io.output<float>("y");
    ref::proj_q8_0_group(io.input<float>("x"), io.input<BlockQ8_0>("w"), y, n, k, 1,
                         {.width = proj_q8_0_v2_width(k / QK8_0)});
    ref::add_f32(y, io.input<float>("a"), y, n);
}

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// The activation quantized once into the caller's xq, as the forward's fast path holds it.
int hoist(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_hoist(io.input<float>("x"), io.workspace<BlockQ8_0>("xq"), s["k"], stream_of(io));
}
// In place, as the residual is: y starts as a copy of a, and the projection adds into it.
int hoist_and_copy_a(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<float>("y"), io.input<float>("a"), size_t(s["n"]) * 4, stream_of(io));
    return hoist(s, io);
}

int separate(const Shape& s, const DeviceIo& io) {
    float* y = io.output<float>("y");
    cuda::proj_q8_0_v2(io.input<BlockQ8_0>("w"), io.workspace<BlockQ8_0>("xq"), y, s["n"], s["k"], stream_of(io));
    cuda::add_f32(y, io.input<float>("a"), y, s["n"], stream_of(io));
    return 2;
}
int fused(const Shape& s, const DeviceIo& io) {
    cuda::proj_q8_0_v2_add(io.input<BlockQ8_0>("w"), io.workspace<BlockQ8_0>("xq"), io.input<float>("a"),
                           io.output<float>("y"), s["n"], s["k"], stream_of(io));
    return 1;
}
int fused_inplace(const Shape& s, const DeviceIo& io) {
    float* y = io.output<float>("y");
    cuda::proj_q8_0_v2_add(io.input<BlockQ8_0>("w"), io.workspace<BlockQ8_0>("xq"), y, y, s["n"], s["k"], stream_of(io));
    return 1;
}
#endif

FamilySpec spec() {
    return FamilySpec{
        .name = "proj_q8_0_add",
        .summary = "decode projection with the add epilogue: y[n] = W[n][k] x + a[n] (the q/k/v bias, or the residual in place)",
        .dims = {{.name = "n", .lo = 1, .hi = 3072, .edges = {1, 2, 3, 31, 32, 33, 127, 128, 896, 1023, 1024, 1025, 2049},
                  .doc = "rows (output features); 8 rows per CUDA block from 1024"},
                 {.name = "k", .lo = 32, .hi = 8192, .multiple = 32,
                  .edges = {32, 64, 896, 1024, 1056, 2048, 2080, 3584, 4096, 4864, 8192},
                  .doc = "input features, a multiple of 32 (the projection's widths switch at 32 and 64 blocks)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1 || s["n"] > (int64_t(1) << 24)) return "n must be in [1, 2^24]";
            if (s["k"] < QK8_0 || s["k"] % QK8_0 != 0) return "k must be a positive multiple of 32";
            if (s["k"] > 131072) return "k must be at most 131072 (the activation lives in shared memory)";
            return "";
        },
        .tensors =
            {
                inputs::f32_input("x", "", "k"),
                {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                 .bytes = [](const Shape& s) { return size_t(s["n"]) * xq_bytes(s); },
                 .generate =
                     [](const Shape&, const GenRequest& r, std::span<uint8_t> out) {
                         // As proj_q8_0: activations quantizing to d = 0 meet weights of any sign.
                         GenRequest wr = r;
                         if (r.profile == "tiny" || r.profile == "signed_zero") wr.profile = "raw_q8";
                         inputs::fill_q8_0(out, wr);
                     },
                 .decode =
                     [](const Shape& s, size_t off) {
                         const int64_t bpr = s["k"] / QK8_0, blk = int64_t(off / sizeof(BlockQ8_0));
                         return "row " + std::to_string(blk / bpr) + " block " + std::to_string(blk % bpr);
                     }},
                inputs::f32_input("a", "", "n"),
                {.name = "y", .role = Role::output, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                 .decode = [](const Shape&, size_t off) {
                     return "row " + std::to_string(off / 4) + " byte " + std::to_string(off % 4);
                 }},
                {.name = "xq", .role = Role::workspace, .elem = Elem::q8_0, .bytes = xq_bytes,
                 .decode = [](const Shape&, size_t off) { return "block " + std::to_string(off / sizeof(BlockQ8_0)); }},
            },
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero"},
        .variants =
            {
                {.name = "separate",
                 .summary = "v2's projection into y, then add_f32 y = y + a: the unfused pair (2 launches after the hoisted quantize)",
                 .model = model, .claim = "proj_q8_0_add",
                 .launch = BITGATE_ON_DEVICE(separate), .prepare = BITGATE_ON_DEVICE(hoist)},
                {.name = "fused",
                 .summary = "v2 with the add epilogue: lane 0 adds a[r] to the row's finished sum, one __fadd_rn (1 launch)",
                 .model = model, .claim = "proj_q8_0_add",
                 .launch = BITGATE_ON_DEVICE(fused), .prepare = BITGATE_ON_DEVICE(hoist)},
                {.name = "fused_inplace",
                 .summary = "the epilogue on the residual stream in place: y holds a (the preparation copies it), add == y",
                 .model = model, .claim = "proj_q8_0_add",
                 .launch = BITGATE_ON_DEVICE(fused_inplace), .prepare = BITGATE_ON_DEVICE(hoist_and_copy_a)},
            },
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * double(xq_bytes(s)) + double(s["k"]) * 4.0 + double(s["n"]) * 8.0;
        },
        .ops = [](const Shape& s) { return 2.0 * double(s["n"]) * double(s["k"]); },
        .ops_unit = "TOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
