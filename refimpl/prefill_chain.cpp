#include "prefill_chain.hpp"

#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "mmq_q8_0.hpp"
#include "pad40_spec.hpp"
#include "quantize_pad40_t.hpp"
#include "rms_norm.hpp"

namespace bitgate::ref {

void prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                         int64_t n, int64_t K, int64_t N) {
    rms_norm_quant_f32_t(x, norm_w, work.y, n, K, work.qs, work.sda);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K);
}

void prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                           int64_t n, int64_t K, int64_t N) {
    rms_norm_f32(x, norm_w, work.y, n, K);
    quantize_pad40_t(work.y, n, K, work.qs, work.sda);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K);
}

}  // namespace bitgate::ref

namespace {

using namespace bitgate;

// The intermediates are workspaces: the engine poisons and guards them, and compares only C
// (the claim is about what the projection produces, not about how the plane got there).
TensorSpec as_workspace(TensorSpec t) {
    t.role = Role::workspace;
    return t;
}

std::string decode_w(const Shape& s, size_t off) {
    const size_t b = off / sizeof(BlockQ8_0), in = off % sizeof(BlockQ8_0), nb = size_t(s["K"] / QK8_0);
    return "row " + std::to_string(b / nb) + " block " + std::to_string(b % nb) +
           (in < 2 ? " d byte " + std::to_string(in) : " qs[" + std::to_string(in - 2) + "]");
}

std::string decode_c(const Shape& s, size_t off) {
    const size_t e = off / 4, N = size_t(s["N"]);
    return "token " + std::to_string(e / N) + " row " + std::to_string(e % N);
}

using Chain = void (*)(const float*, const float*, const BlockQ8_0*, float*, const ref::ChainWork&, int64_t, int64_t,
                       int64_t);

HostModel model(Chain chain) {
    return [chain](const Shape& s, const HostIo& io) {
        chain(io.input<float>(0), io.input<float>(1), io.input<BlockQ8_0>(2), io.output<float>(0),
              ref::ChainWork{io.workspace<float>(0), io.workspace<uint8_t>(1), io.workspace<uint32_t>(2)}, s["n"],
              s["K"], s["N"]);
    };
}

FamilySpec spec() {
    return FamilySpec{
        .name = "prefill_chain",
        .summary = "rms_norm of x [n][K] into the quantize_pad40_t plane, then mmq_q8_0 with Q8_0 weights [N][K] "
                   "-> C f32 [n][N]: the fused norm and the unfused pair must feed the GEMM the same bytes",
        .dims = {{.name = "n", .lo = 1, .hi = 400, .edges = {1, 2, 63, 64, 65, 127, 128, 129},
                  .doc = "tokens (ragged against the 64-token blocks of the plane)"},
                 {.name = "K", .lo = 128, .hi = 4096, .multiple = 128, .edges = {128, 896, 3584, 4096},
                  .doc = "norm width = GEMM channels, a multiple of 32 (property shapes: of 128)"},
                 {.name = "N", .lo = 1, .hi = 1024, .edges = {1, 7, 63, 64, 65, 127, 128, 129, 200, 257},
                  .doc = "weight rows = output columns (ragged against the GEMM's row tiles)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["K"] < QK8_0 || s["K"] % QK8_0 != 0) return "K must be a positive multiple of 32";
            if (s["N"] < 1) return "N must be at least 1";
            return "";
        },
        .tensors = {ref::pad40_input("x", "K"),
                    {.name = "norm_w", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["K"]) * 4; },
                     .generate = ref::fill_rms_norm_weight},
                    {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                     .bytes = [](const Shape& s) { return size_t(s["N"] * (s["K"] / QK8_0)) * sizeof(BlockQ8_0); },
                     .generate = [](const Shape&, const GenRequest& r,
                                    std::span<uint8_t> out) { inputs::fill_q8_0(out, r); },
                     .decode = decode_w},
                    {.name = "C", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"] * s["N"]) * 4; },
                     .decode = decode_c},
                    as_workspace(ref::pad40_f32_output("y", "K")), as_workspace(ref::pad40_qs_tensor("K")),
                    as_workspace(ref::pad40_sda_tensor("K"))},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "fused",
                      .summary = "rms_norm_quant_f32_t then mmq_q8_0 (automatic tiling): 2 launches",
                      .model = model(ref::prefill_chain_fused),
                      .claim = "prefill_chain"},
                     {.name = "unfused",
                      .summary = "rms_norm_f32, quantize_pad40_t, then mmq_q8_0 (automatic tiling): 3 launches",
                      .model = model(ref::prefill_chain_unfused),
                      .claim = "prefill_chain"}},
        // The fused chain's traffic: x, norm weights and y, the plane written and read, the
        // weights, C.
        .bytes_moved = [](const Shape& s) {
            const double plane = double(pad40_qs_bytes(s["n"], s["K"]) + pad40_sda_bytes(s["n"], s["K"]));
            return double(s["n"]) * double(s["K"]) * 8.0 + double(s["K"]) * 4.0 + 2.0 * plane +
                   double(s["N"] * (s["K"] / QK8_0)) * sizeof(BlockQ8_0) + double(s["n"] * s["N"]) * 4.0;
        },
        .ops = [](const Shape& s) { return 2.0 * double(s["n"]) * double(s["N"]) * double(s["K"]); },
        .ops_unit = "TOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
