#include "proj_q8_0.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/spec.hpp"
#include "quantize_q8_0.hpp"

namespace bitgate::ref {

int32_t q8_0_sumi(const BlockQ8_0& w, const BlockQ8_0& x) {
    int32_t s = 0;
    for (int j = 0; j < QK8_0; ++j) s += int32_t(w.qs[j]) * int32_t(x.qs[j]);
    return s;
}

namespace {

// Rows [r0, r1), performed as the kernel does: W per-thread accumulators, then each logical warp's
// xor tree lane by lane, then the warps in order.
void proj_rows(const BlockQ8_0* w, const BlockQ8_0* xq, const float* dx, float* y, int64_t r0, int64_t r1,
               int64_t bpr, const ProjQ8Order& order) {
    const int width = order.width;
    std::vector<float> acc(static_cast<size_t>(width));
    for (int64_t r = r0; r < r1; ++r) {
        const BlockQ8_0* row = w + r * bpr;
        for (float& a : acc) a = 0.0f;
        // Block b belongs to thread b % W; walking b upwards walks each thread's blocks upwards.
        for (int64_t b = 0; b < bpr; ++b) {
            const float d = f16_to_f32(row[b].d) * dx[b];
            float& a = acc[size_t(b % width)];
            a = std::fma(static_cast<float>(q8_0_sumi(row[b], xq[b])), d, a);
        }
        float total = 0.0f;
        for (int warp = 0; warp < width / 32; ++warp) {
            float v[32], next[32];
            for (int l = 0; l < 32; ++l) v[l] = acc[size_t(warp * 32 + l)];
            for (int off : order.tree) {
                for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ off];
                for (int l = 0; l < 32; ++l) v[l] = next[l];
            }
            total = warp == 0 ? v[0] : total + v[0];  // lane 0's value; warp 0 first
        }
        y[r] = total;
    }
}

}  // namespace

void proj_q8_0(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t bpr, const ProjQ8Order& order,
               int threads) {
    std::vector<float> dx(static_cast<size_t>(bpr));
    for (int64_t b = 0; b < bpr; ++b) dx[size_t(b)] = f16_to_f32(xq[b].d);
    // Split rows over threads (CI has two cores) once a matrix is worth it; rows do not interact.
    const int64_t parts = n * bpr < (int64_t(1) << 16) ? 1 : std::min<int64_t>(std::max(threads, 1), n);
    std::vector<std::thread> others;
    for (int64_t p = 1; p < parts; ++p)
        others.emplace_back(proj_rows, w, xq, dx.data(), y, n * p / parts, n * (p + 1) / parts, bpr, std::cref(order));
    proj_rows(w, xq, dx.data(), y, 0, n / parts, bpr, order);
    for (auto& t : others) t.join();
}

void proj_q8_0_group(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                     const ProjQ8Order& order) {
    const int64_t bpr = k / QK8_0;
    std::vector<BlockQ8_0> xq(static_cast<size_t>(bpr));
    quantize_q8_0(x, xq.data(), k);
    for (int64_t m = 0; m < g; ++m) proj_q8_0(w + m * n * bpr, xq.data(), y + m * n, n, bpr, order);
}

}  // namespace bitgate::ref

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
        ref::proj_q8_0_group(io.input<float>(0), io.input<BlockQ8_0>(1), io.output<float>(0), s["n"], s["k"], s["g"],
                             order(s));
    };
}

FamilySpec spec() {
    return FamilySpec{
        .name = "proj_q8_0",
        .summary = "decode projection GEMV: f32 activation quantized to Q8_0, times g Q8_0 weight matrices [n][k]",
        .dims = {{.name = "n", .lo = 1, .hi = 3072,
                  .edges = {1, 2, 3, 5, 31, 32, 33, 96, 127, 1023, 1024, 1025, 1026, 1027, 2049},
                  .doc = "rows (output features); 4 rows per CUDA block from 1024"},
                 {.name = "k", .lo = 32, .hi = 8192, .multiple = 32,
                  .edges = {32, 64, 1024, 1056, 2048, 2080, 4096, 8192, 14336, 18944},
                  .doc = "input features, a multiple of 32 (blocks per row = k/32; widths switch at 32 and 64)"},
                 {.name = "g", .lo = 1, .hi = 4, .edges = {1, 4},
                  .doc = "weight matrices sharing the activation (fused4 needs 4)"}},
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
                 .model = group_model(v1_order), .claim = "proj_q8_0"},
                {.name = "v2",
                 .summary = "get_int_b2 words + dp4a, width 32/64/128 from k/32, 4 rows per CUDA block for n >= 1024; per call quantize + project per matrix",
                 .model = group_model(v2_order), .claim = "proj_q8_0"},
                {.name = "fused4",
                 .summary = "hoisted activation read by four matrices in one launch: prepare quantizes x once into xq, then 1 launch per group of 4 (2 launches in all)",
                 .model = group_model(v2_order),
                 .valid = [](const Shape& s) -> std::string { return s["g"] == 4 ? "" : "fused4 needs g == 4"; },
                 .claim = "proj_q8_0"},
                {.name = "hoisted",
                 .summary = "prepare quantizes x once into the caller's xq, then v2's projection per matrix: g launches (1 + g in all)",
                 .model = group_model(v2_order), .claim = "proj_q8_0"},
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
