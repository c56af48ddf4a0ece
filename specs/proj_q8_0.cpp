// The proj_q8_0 family: the decode projection GEMV, Q8_0 weights times a quantized activation.
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/spec.hpp"
#include "proj_q8_0.cuh"
#include "proj_q8_0.hpp"

namespace {

using namespace bitgate;

std::string decode_weights(const Shape& s, size_t off) {
    const int64_t bpr = s["k"] / QK8_0, n = s["n"];
    const int64_t blk = int64_t(off / sizeof(BlockQ8_0)), byte = int64_t(off % sizeof(BlockQ8_0));
    return "matrix " + std::to_string(blk / (n * bpr)) + " row " + std::to_string(blk / bpr % n) + " block " +
           std::to_string(blk % bpr) + (byte < 2 ? " d byte " + std::to_string(byte) : " qs[" + std::to_string(byte - 2) + "]");
}

std::string decode_y(const Shape& s, size_t off) {
    const int64_t i = int64_t(off / 4), n = s["n"];
    return "matrix " + std::to_string(i / n) + " row " + std::to_string(i % n) + " byte " + std::to_string(off % 4);
}

std::string decode_xq(const Shape&, size_t off) {
    return "block " + std::to_string(off / sizeof(BlockQ8_0)) + " byte " + std::to_string(off % sizeof(BlockQ8_0));
}

size_t xq_bytes(const Shape& s) { return size_t(s["k"] / QK8_0) * sizeof(BlockQ8_0); }

ref::ProjQ8Order v1_order(const Shape&) { return {.width = proj_q8_0_v1_width}; }
ref::ProjQ8Order v2_order(const Shape& s) { return {.width = proj_q8_0_v2_width(s["k"] / QK8_0)}; }

HostModel group_model(ref::ProjQ8Order (*order)(const Shape&)) {
    return [order](const Shape& s, const HostIo& io) {
        ref::proj_q8_0_group(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"], s["k"],
                             s["g"], order(s));
    };
}

// The launchers. Per call: every matrix quantizes x into the call's own scratch, never into the
// hoisted xq. fused4 and hoisted: the quantize is the preparation (once per activation, run by
// the engine before every checked launch, untimed by the benchmark); the launch is the
// projection alone.
#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

int per_call_v1(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_per_call_v1(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"],
                                       s["k"], s["g"], io.workspace<BlockQ8_0>("scratch"), stream_of(io));
}
int per_call_v2(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_per_call_v2(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"],
                                       s["k"], s["g"], io.workspace<BlockQ8_0>("scratch"), stream_of(io));
}
int hoist(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_hoist(io.input<float>("x"), io.workspace<BlockQ8_0>("xq"), s["k"], stream_of(io));
}
int project_fused4(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_project_fused4(io.workspace<BlockQ8_0>("xq"), io.input<BlockQ8_0>("w"), io.output<float>("y"),
                                          s["n"], s["k"], stream_of(io));
}
int project_fused2(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_project_fused2(io.workspace<BlockQ8_0>("xq"), io.input<BlockQ8_0>("w"), io.output<float>("y"),
                                          s["n"], s["k"], stream_of(io));
}
int project_hoisted(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_project_hoisted(io.workspace<BlockQ8_0>("xq"), io.input<BlockQ8_0>("w"),
                                           io.output<float>("y"), s["n"], s["k"], s["g"], stream_of(io));
}
#endif

FamilySpec spec() {
    return FamilySpec{
        .name = "proj_q8_0",
        .summary = "decode projection GEMV: f32 activation quantized to Q8_0, times g Q8_0 weight matrices [n][k]",
        .dims = {{.name = "n", .lo = 1, .hi = 3072,
                  .edges = {1, 2, 3, 5, 31, 32, 33, 96, 127, 1023, 1024, 1025, 1026, 1027, 2049},
                  .doc = "rows (output features); 8 rows per CUDA block from 1024"},
                 {.name = "k", .lo = 32, .hi = 8192, .multiple = 32,
                  .edges = {32, 64, 1024, 1056, 2048, 2080, 4096, 8192, 14336, 18944},
                  .doc = "input features, a multiple of 32 (blocks per row = k/32; widths switch at 32 and 64)"},
                 {.name = "g", .lo = 1, .hi = 4, .edges = {1, 2, 4},
                  .doc = "weight matrices sharing the activation (fused2 needs 2, fused4 4)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1 || s["n"] > (int64_t(1) << 24)) return "n must be in [1, 2^24]";
            if (s["k"] < QK8_0 || s["k"] % QK8_0 != 0) return "k must be a positive multiple of 32";
            if (s["k"] > 131072) return "k must be at most 131072 (the activation lives in shared memory)";
            if (s["g"] < 1 || s["g"] > 4) return "g must be in [1, 4]";
            return "";
        },
        .tensors =
            {
                inputs::f32_input("x", "", "k"),
                {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                 .bytes = [](const Shape& s) { return size_t(s["g"] * s["n"]) * xq_bytes(s); },
                 .generate =
                     [](const Shape&, const GenRequest& r, std::span<uint8_t> out) {
                         // Activations that quantize to d = 0 (tiny, signed_zero) meet weights of
                         // any sign: the signed-zero products the order must keep at +0.
                         GenRequest wr = r;
                         if (r.profile == "tiny" || r.profile == "signed_zero") wr.profile = "raw_q8";
                         inputs::fill_q8_0(out, wr);
                     },
                 .decode = decode_weights},
                {.name = "y", .role = Role::output, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["g"] * s["n"]) * 4; },
                 .decode = decode_y},
                // The hoisted activation, owned by the caller and read by every projection of the group.
                {.name = "xq", .role = Role::workspace, .elem = Elem::q8_0, .bytes = xq_bytes, .decode = decode_xq},
                // The per-call path's own quantized copy: never the hoisted buffer.
                {.name = "scratch", .role = Role::workspace, .elem = Elem::q8_0, .bytes = xq_bytes, .decode = decode_xq},
            },
        .profiles = {"uniform", "normal", "outliers", "ties", "zeros", "tiny", "signed_zero", "raw_q8"},
        .variants =
            {
                {.name = "v1",
                 .summary = "plain: 128 threads, one row per CUDA block, byte loads, scalar int MACs; per call quantize + project per matrix",
                 .model = group_model(v1_order), .claim = "proj_q8_0", .launch = BITGATE_ON_DEVICE(per_call_v1)},
                {.name = "v2",
                 .summary = "get_int_b2 words + dp4a, width 32/64/128 from k/32, 8 rows per CUDA block for n >= 1024; per call quantize + project per matrix",
                 .model = group_model(v2_order), .claim = "proj_q8_0", .launch = BITGATE_ON_DEVICE(per_call_v2)},
                {.name = "fused4",
                 .summary = "hoisted activation read by four matrices in one launch: prepare quantizes x once into xq, then 1 launch per group of 4 (2 launches in all)",
                 .model = group_model(v2_order),
                 .valid = [](const Shape& s) -> std::string { return s["g"] == 4 ? "" : "fused4 needs g == 4"; },
                 .claim = "proj_q8_0",
                 .launch = BITGATE_ON_DEVICE(project_fused4),
                 .prepare = BITGATE_ON_DEVICE(hoist)},
                {.name = "fused2",
                 .summary = "hoisted activation read by a pair of matrices (the feed-forward's gate and up) in one launch: fused4's kernel over two (2 launches in all)",
                 .model = group_model(v2_order),
                 .valid = [](const Shape& s) -> std::string { return s["g"] == 2 ? "" : "fused2 needs g == 2"; },
                 .claim = "proj_q8_0",
                 .launch = BITGATE_ON_DEVICE(project_fused2),
                 .prepare = BITGATE_ON_DEVICE(hoist)},
                {.name = "hoisted",
                 .summary = "prepare quantizes x once into the caller's xq, then v2's projection per matrix: g launches (1 + g in all)",
                 .model = group_model(v2_order), .claim = "proj_q8_0",
                 .launch = BITGATE_ON_DEVICE(project_hoisted),
                 .prepare = BITGATE_ON_DEVICE(hoist)},
            },
        .bytes_moved = [](const Shape& s) {
            return double(s["g"] * s["n"]) * double(xq_bytes(s)) + double(s["k"]) * 4.0 + double(s["g"] * s["n"]) * 4.0;
        },
        .ops = [](const Shape& s) { return 2.0 * double(s["g"] * s["n"]) * double(s["k"]); },
        .ops_unit = "TOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
