// proj_q8_0_add mutants: what each must be caught as. The kernel mutant carries no model (it is
// held to the variant it imitates, the defect is in mutants/proj_q8_0_add.cu); the host mutant
// carries a wrong model and no kernel.
#include <string>

#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/spec.hpp"
#include "../kernels/proj_q8_0.cuh"
#include "proj_q8_0.hpp"
#include "proj_q8_0_add.cuh"

namespace {

using namespace bitgate;

#if defined(BITGATE_HAVE_CUDA)
int add_early(const Shape& s, const DeviceIo& io) {
    return cuda::mutants::proj_q8_0_add_early(io.input<BlockQ8_0>("w"), io.workspace<BlockQ8_0>("xq"),
                                              io.input<float>("a"), io.output<float>("y"), s["n"], s["k"],
                                              static_cast<cudaStream_t>(io.stream));
}
int hoist(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_hoist(io.input<float>("x"), io.workspace<BlockQ8_0>("xq"), s["k"],
                                 static_cast<cudaStream_t>(io.stream));
}
#endif

// The projection alone: a model that forgot the epilogue.
void no_add_model(const Shape& s, const HostIo& io) {
    ref::proj_q8_0_group(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"], s["k"], 1,
                         {.width = proj_q8_0_v2_width(s["k"] / QK8_0)});
}

BITGATE_VARIANT("proj_q8_0_add", VariantSpec{
    .name = "no_add_model",
    .summary = "host model without the epilogue: y = W x",
    .model = no_add_model,
    .mutant = true, .expect = "golden_mismatch", .golden_as = "fused"});

// Every row is still written; the addend is rounded into lane 0's partial sum before the tree,
// so rows whose partial sums are not exact in f32 come out different: a value mismatch.
BITGATE_VARIANT("proj_q8_0_add", VariantSpec{
    .name = "add_early",
    .summary = "fused kernel adding a[r] to lane 0's first partial sum before the warp tree",
    .valid = [](const Shape& s) -> std::string {
        return s["k"] >= 256 && s["n"] >= 32 ? "" : "needs k >= 256 and n >= 32 for a moved rounding to show";
    },
    .mutant = true, .expect = "value_mismatch", .golden_as = "fused",
    .launch = BITGATE_ON_DEVICE(add_early), .prepare = BITGATE_ON_DEVICE(hoist)});

}  // namespace
