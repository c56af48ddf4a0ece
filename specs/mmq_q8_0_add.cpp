// The mmq_q8_0_add family: the prefill GEMM with the add epilogue. The q/k/v projections add their
// bias (one value per output column, broadcast over tokens); o and down add the residual stream
// [n][N], in place in the forward. The fused kernel adds after the whole sum with one rounding
// per addend, so its bytes are those of mmq_q8_0 followed by the separate bias or add kernel: the
// claims mmq_q8_0_bias and mmq_q8_0_residual (docs/mmq_q8_0_add.md).
#include <string>

#include "add.cuh"
#include "add.hpp"
#include "bias.cuh"
#include "bias.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"
#include "mmq_q8_0.cuh"
#include "mmq_q8_0.hpp"
#include "pad40_tensors.hpp"
#include "quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"

namespace {

using namespace bitgate;

// The plane is a workspace: the engine poisons and guards it; the claims are about y.
TensorSpec as_workspace(TensorSpec t) {
    t.role = Role::workspace;
    return t;
}

int64_t nchunk_of(const Shape& s) { return s["K"] / QK8_0; }

std::string decode_w(const Shape& s, size_t off) {
    const size_t b = off / sizeof(BlockQ8_0), in = off % sizeof(BlockQ8_0), nb = size_t(nchunk_of(s));
    return "row " + std::to_string(b / nb) + " block " + std::to_string(b % nb) +
           (in < 2 ? " d byte " + std::to_string(in) : " qs[" + std::to_string(in - 2) + "]");
}

std::string decode_y(const Shape& s, size_t off) {
    const size_t e = off / 4, N = size_t(s["N"]);
    return "token " + std::to_string(e / N) + " row " + std::to_string(e % N) + " byte " + std::to_string(off % 4);
}

// The GEMM's host model: the plane of x, then mmq_q8_0's order.
void gemm(const Shape& s, const HostIo& io) {
    uint8_t* qs = io.workspace<uint8_t>("qs");
    uint32_t* sda = io.workspace<uint32_t>("sda");
    ref::quantize_pad40_t(io.input<float>("x"), s["n"], s["K"], qs, sda);
    ref::mmq_q8_0(qs, sda, io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"], s["N"], s["K"]);
}
void bias_model(const Shape& s, const HostIo& io) {
    gemm(s, io);
    ref::bias_f32(io.output<float>("y"), io.input<float>("b"), s["n"], s["N"]);
}
void residual_model(const Shape& s, const HostIo& io) {
    gemm(s, io);
    float* y = io.output<float>("y");
    ref::add_f32(y, io.input<float>("r"), y, s["n"] * s["N"]);
}

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// x quantized into the plane once, as the forward's producers leave it for the GEMM.
int quantize(const Shape& s, const DeviceIo& io) {
    cuda::quantize_pad40_t(io.input<float>("x"), s["n"], s["K"], io.workspace<uint8_t>("qs"),
                           io.workspace<uint32_t>("sda"), stream_of(io));
    return 1;
}
// In place, as the residual stream is: y starts as a copy of r.
int quantize_and_copy_r(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<float>("y"), io.input<float>("r"), size_t(s["n"] * s["N"]) * 4, stream_of(io));
    return quantize(s, io);
}

int run_mmq(const Shape& s, const DeviceIo& io, const float* bias, const float* res,
            cuda::MmqTiling tiling = cuda::MmqTiling::automatic) {
    cuda::mmq_q8_0_add(io.workspace<uint8_t>("qs"), io.workspace<uint32_t>("sda"), io.input<BlockQ8_0>("w"), bias, res,
                       io.output<float>("y"), s["n"], s["N"], s["K"], tiling, stream_of(io));
    return 1;
}
int bias_separate(const Shape& s, const DeviceIo& io) {
    run_mmq(s, io, nullptr, nullptr);
    cuda::bias_f32(io.output<float>("y"), io.input<float>("b"), s["n"], s["N"], stream_of(io));
    return 2;
}
int bias_fused(const Shape& s, const DeviceIo& io) { return run_mmq(s, io, io.input<float>("b"), nullptr); }
int residual_separate(const Shape& s, const DeviceIo& io) {
    run_mmq(s, io, nullptr, nullptr);
    float* y = io.output<float>("y");
    cuda::add_f32(y, io.input<float>("r"), y, s["n"] * s["N"], stream_of(io));
    return 2;
}
int residual_fused(const Shape& s, const DeviceIo& io) { return run_mmq(s, io, nullptr, io.input<float>("r")); }
int residual_inplace(const Shape& s, const DeviceIo& io) {
    return run_mmq(s, io, nullptr, io.output<float>("y"));
}
#endif

// The epilogue on the sm_90a kernel whatever the shape (the dispatcher takes it only where a
// shape fills the card, which most of these catalogs' shapes do not). Launchers only where it is built
// (cmake/sm90a.cmake); elsewhere the engine skips their device checks with that reason.
enum class Addend { bias, residual, inplace };
DeviceLauncher wgmma_launcher([[maybe_unused]] Addend a) {
#if defined(BITGATE_HAVE_SM90A)
    return [a](const Shape& s, const DeviceIo& io) {
        const float* bias = a == Addend::bias ? io.input<float>("b") : nullptr;
        const float* res = a == Addend::residual ? io.input<float>("r")
                           : a == Addend::inplace ? io.output<float>("y")
                                                  : nullptr;
        return run_mmq(s, io, bias, res, cuda::MmqTiling::wgmma);
    };
#else
    return nullptr;
#endif
}

VariantSpec variant(std::string name, std::string summary, HostModel model, std::string claim, DeviceLauncher launch,
                    DeviceLauncher prepare) {
    return VariantSpec{.name = std::move(name), .summary = std::move(summary), .model = std::move(model),
                       .claim = std::move(claim), .launch = std::move(launch), .prepare = std::move(prepare)};
}

FamilySpec spec() {
    return FamilySpec{
        .name = "mmq_q8_0_add",
        .summary = "prefill GEMM with the add epilogue: y[n][N] = W[N][K] x + b[N] (the q/k/v bias) or + r[n][N] "
                   "(the residual, in place)",
        .dims =
            {
                {.name = "n", .lo = 1, .hi = 400, .edges = {1, 2, 63, 64, 65, 127, 128, 129},
                 .doc = "tokens (ragged against the 64-token blocks of the plane)"},
                {.name = "N", .lo = 1, .hi = 1100, .edges = {1, 2, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257},
                 .doc = "weight rows = output columns (ragged against the 64/128-row tiles; odd N stores scalars)"},
                {.name = "K", .lo = 32, .hi = 2048, .multiple = 32, .edges = {32, 64, 96, 128, 896, 928},
                 .doc = "channels, a multiple of 32"},
            },
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["N"] < 1) return "N must be at least 1";
            if (s["K"] < QK8_0 || s["K"] % QK8_0 != 0) return "K must be a positive multiple of 32";
            return "";
        },
        .tensors =
            {
                specs::pad40_input("x", "K"),
                {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                 .bytes = [](const Shape& s) { return size_t(s["N"] * nchunk_of(s)) * sizeof(BlockQ8_0); },
                 .generate = [](const Shape&, const GenRequest& r, std::span<uint8_t> out) { inputs::fill_q8_0(out, r); },
                 .decode = decode_w},
                inputs::f32_input("b", "", "N"),
                inputs::f32_input("r", "n", "N"),
                {.name = "y", .role = Role::output, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["n"] * s["N"]) * 4; },
                 .decode = decode_y},
                as_workspace(specs::pad40_qs_tensor("K")),
                as_workspace(specs::pad40_sda_tensor("K")),
            },
        .profiles = {"uniform", "normal", "outliers", "zeros"},
        .variants =
            {
                variant("bias_separate", "mmq_q8_0 into y, then bias_f32 y += b: the unfused pair (2 launches)",
                        bias_model, "mmq_q8_0_bias", BITGATE_ON_DEVICE(bias_separate), BITGATE_ON_DEVICE(quantize)),
                variant("bias_fused", "mmq_q8_0 with the epilogue y = sum + b[col], one __fadd_rn (1 launch)",
                        bias_model, "mmq_q8_0_bias", BITGATE_ON_DEVICE(bias_fused), BITGATE_ON_DEVICE(quantize)),
                variant("residual_separate", "mmq_q8_0 into y, then add_f32 y = y + r: the unfused pair (2 launches)",
                        residual_model, "mmq_q8_0_residual", BITGATE_ON_DEVICE(residual_separate),
                        BITGATE_ON_DEVICE(quantize)),
                variant("residual_fused", "mmq_q8_0 with the epilogue y = sum + r[t][col], one __fadd_rn (1 launch)",
                        residual_model, "mmq_q8_0_residual", BITGATE_ON_DEVICE(residual_fused),
                        BITGATE_ON_DEVICE(quantize)),
                variant("residual_inplace",
                        "the epilogue on the residual stream in place: y holds r (the preparation copies it), res == y",
                        residual_model, "mmq_q8_0_residual", BITGATE_ON_DEVICE(residual_inplace),
                        BITGATE_ON_DEVICE(quantize_and_copy_r)),
                variant("wgmma_bias_fused", "bias_fused on the sm_90a wgmma kernel (1 launch)", bias_model,
                        "mmq_q8_0_bias", wgmma_launcher(Addend::bias), BITGATE_ON_DEVICE(quantize)),
                variant("wgmma_residual_fused", "residual_fused on the sm_90a wgmma kernel (1 launch)",
                        residual_model, "mmq_q8_0_residual", wgmma_launcher(Addend::residual),
                        BITGATE_ON_DEVICE(quantize)),
                variant("wgmma_residual_inplace", "residual_inplace on the sm_90a wgmma kernel (1 launch)",
                        residual_model, "mmq_q8_0_residual", wgmma_launcher(Addend::inplace),
                        BITGATE_ON_DEVICE(quantize_and_copy_r)),
            },
        // The fused kernel's traffic: the plane, the weights, y written and the addend read (the
        // residual's [n][N], counted for both addends: the bias is N floats, cached).
        .bytes_moved = [](const Shape& s) {
            return double(pad40_qs_bytes(s["n"], s["K"]) + pad40_sda_bytes(s["n"], s["K"])) +
                   double(s["N"] * nchunk_of(s)) * sizeof(BlockQ8_0) + double(s["n"] * s["N"]) * 8.0;
        },
        .ops = [](const Shape& s) { return 2.0 * double(s["n"]) * double(s["N"]) * double(s["K"]); },
        .ops_unit = "TOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
