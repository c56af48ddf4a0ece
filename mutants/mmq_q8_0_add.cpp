// mmq_q8_0_add mutants: what each must be caught as. The kernel mutants carry no model (each is
// held to the variant it imitates; the defect is in mutants/mmq_q8_0_add.cu); the host mutant
// carries a wrong model and no kernel.
#include <string>

#include "bitgate/spec.hpp"
#include "mmq_q8_0.hpp"
#include "mmq_q8_0.cuh"
#include "mmq_q8_0_add.cuh"
#include "../kernels/quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"

namespace {

using namespace bitgate;

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }
int quantize(const Shape& s, const DeviceIo& io) {
    cuda::quantize_pad40_t(io.input<float>("x"), s["n"], s["K"], io.workspace<uint8_t>("qs"),
                           io.workspace<uint32_t>("sda"), stream_of(io));
    return 1;
}
int add_first(const Shape& s, const DeviceIo& io, const float* bias, const float* res) {
    return cuda::mutants::mmq_q8_0_add_first(io.workspace<uint8_t>("qs"), io.workspace<uint32_t>("sda"),
                                             io.input<BlockQ8_0>("w"), bias, res, io.output<float>("y"), s["n"],
                                             s["N"], s["K"], stream_of(io));
}
int bias_first(const Shape& s, const DeviceIo& io) { return add_first(s, io, io.input<float>("b"), nullptr); }
int residual_first(const Shape& s, const DeviceIo& io) { return add_first(s, io, nullptr, io.input<float>("r")); }
#endif
#if defined(BITGATE_HAVE_SM90A)
int wgmma_residual_first(const Shape& s, const DeviceIo& io) {
    cuda::mutants::mmq_q8_0_wgmma_defective(cuda::mutants::WgmmaDefect::add_first, io.workspace<uint8_t>("qs"),
                                            io.workspace<uint32_t>("sda"), io.input<BlockQ8_0>("w"),
                                            io.output<float>("y"), s["n"], s["N"], s["K"], stream_of(io), nullptr,
                                            io.input<float>("r"));
    return 1;
}
#endif

// The GEMM alone: a model that forgot the epilogue.
void no_add_model(const Shape& s, const HostIo& io) {
    uint8_t* qs = io.workspace<uint8_t>("qs");
    uint32_t* sda = io.workspace<uint32_t>("sda");
    ref::quantize_pad40_t(io.input<float>("x"), s["n"], s["K"], qs, sda);
    ref::mmq_q8_0(qs, sda, io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"], s["N"], s["K"]);
}

BITGATE_VARIANT("mmq_q8_0_add", VariantSpec{
    .name = "no_add_model",
    .summary = "host model without the epilogue: y = W x",
    .model = no_add_model,
    .mutant = true, .expect = "golden_mismatch", .golden_as = "residual_fused"});

// Every element is still written; the addend enters before the first chunk's fma, so elements
// whose sums are not exact in f32 round differently: a value mismatch.
std::string enough_outputs(const Shape& s) {
    return s["n"] * s["N"] >= 64 && s["K"] >= 64 ? "" : "needs n * N >= 64 and K >= 64 for a moved rounding to show";
}
BITGATE_VARIANT("mmq_q8_0_add", VariantSpec{
    .name = "m_bias_first",
    .summary = "fused kernel seeding the accumulator with b[col] instead of adding it after the sum",
    .valid = enough_outputs,
    .mutant = true, .expect = "value_mismatch", .golden_as = "bias_fused",
    .launch = BITGATE_ON_DEVICE(bias_first), .prepare = BITGATE_ON_DEVICE(quantize)});
BITGATE_VARIANT("mmq_q8_0_add", VariantSpec{
    .name = "m_residual_first",
    .summary = "fused kernel seeding the accumulator with r[t][col] instead of adding it after the sum",
    .valid = enough_outputs,
    .mutant = true, .expect = "value_mismatch", .golden_as = "residual_fused",
    .launch = BITGATE_ON_DEVICE(residual_first), .prepare = BITGATE_ON_DEVICE(quantize)});
#if defined(BITGATE_HAVE_SM90A)
// The sm_90a kernel's own epilogue: declared exactly where it is built (cmake/sm90a.cmake).
BITGATE_VARIANT("mmq_q8_0_add", VariantSpec{
    .name = "m_wgmma_residual_first",
    .summary = "wgmma kernel seeding the accumulators with r[t][col] instead of adding it after the sum",
    .valid = enough_outputs,
    .mutant = true, .expect = "value_mismatch", .golden_as = "wgmma_residual_fused",
    .launch = wgmma_residual_first, .prepare = quantize});
#endif

}  // namespace
