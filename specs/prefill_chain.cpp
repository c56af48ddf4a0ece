// The prefill_chain family: rms_norm into the quantize_pad40_t plane, then mmq_q8_0.
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "pad40_tensors.hpp"
#include "prefill_chain.cuh"
#include "prefill_chain.hpp"

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
        chain(io.input<float>("x"), io.input<float>("norm_w"), io.input<BlockQ8_0>("w"), io.output<float>("C"),
              ref::ChainWork{io.workspace<float>("y"), io.workspace<uint8_t>("qs"), io.workspace<uint32_t>("sda")},
              s["n"], s["K"], s["N"]);
    };
}

#if defined(BITGATE_HAVE_CUDA)
using DeviceChain = int (*)(const float*, const float*, const BlockQ8_0*, float*, const cuda::ChainWork&, int64_t,
                            int64_t, int64_t, cudaStream_t);

DeviceLauncher launcher(DeviceChain chain) {
    return [chain](const Shape& s, const DeviceIo& io) {
        return chain(io.input<float>("x"), io.input<float>("norm_w"), io.input<BlockQ8_0>("w"), io.output<float>("C"),
                     cuda::ChainWork{io.workspace<float>("y"), io.workspace<uint8_t>("qs"), io.workspace<uint32_t>("sda")},
                     s["n"], s["K"], s["N"], static_cast<cudaStream_t>(io.stream));
    };
}
#endif

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
        .tensors = {specs::pad40_input("x", "K"),
                    specs::rms_norm_weight("norm_w", "K"),
                    {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                     .bytes = [](const Shape& s) { return size_t(s["N"] * (s["K"] / QK8_0)) * sizeof(BlockQ8_0); },
                     .generate = [](const Shape&, const GenRequest& r,
                                    std::span<uint8_t> out) { inputs::fill_q8_0(out, r); },
                     .decode = decode_w},
                    {.name = "C", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"] * s["N"]) * 4; },
                     .decode = decode_c},
                    as_workspace(specs::pad40_f32_output("y", "K")), as_workspace(specs::pad40_qs_tensor("K")),
                    as_workspace(specs::pad40_sda_tensor("K"))},
        .profiles = {"uniform", "normal", "outliers", "zeros", "tiny", "signed_zero"},
        .variants = {{.name = "fused",
                      .summary = "rms_norm_quant_f32_t then mmq_q8_0 (automatic tiling): 2 launches",
                      .model = model(ref::prefill_chain_fused),
                      .claim = "prefill_chain",
                      .launch = BITGATE_ON_DEVICE(launcher(cuda::prefill_chain_fused))},
                     {.name = "unfused",
                      .summary = "rms_norm_f32, quantize_pad40_t, then mmq_q8_0 (automatic tiling): 3 launches",
                      .model = model(ref::prefill_chain_unfused),
                      .claim = "prefill_chain",
                      .launch = BITGATE_ON_DEVICE(launcher(cuda::prefill_chain_unfused))}},
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
