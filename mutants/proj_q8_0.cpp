// proj_q8_0 mutants: what each must be caught as. Kernel mutants carry no model: they are held
// to the variant they imitate (the defect is in mutants/proj_q8_0.cu); the host mutant carries a
// wrong model and no kernel.
#include <string>

#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/spec.hpp"
#include "../kernels/proj_q8_0.cuh"
#include "proj_q8_0.cuh"
#include "proj_q8_0.hpp"

namespace {

using namespace bitgate;

int64_t bpr_of(const Shape& s) { return s["k"] / QK8_0; }

// v2's model with the warp tree's offsets applied ascending.
void tree_ascending_model(const Shape& s, const HostIo& io) {
    ref::ProjQ8Order order{.width = proj_q8_0_v2_width(bpr_of(s))};
    const int ascending[5] = {1, 2, 4, 8, 16};
    for (int i = 0; i < 5; ++i) order.tree[i] = ascending[i];
    ref::proj_q8_0_group(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"), s["n"], s["k"], s["g"],
                         order);
}

using cuda::mutants::ProjQ8Defect;

DeviceLauncher per_call([[maybe_unused]] ProjQ8Defect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        return cuda::mutants::proj_q8_0_per_call_defective(defect, io.input<float>("x"), io.input<BlockQ8_0>("w"),
                                                           io.output<float>("y"), s["n"], s["k"], s["g"],
                                                           io.workspace<BlockQ8_0>("scratch"),
                                                           static_cast<cudaStream_t>(io.stream));
    });
}

#if defined(BITGATE_HAVE_CUDA)
// Matrices 1 and 2 of the fused group passed in each other's place; hoisted like fused4 itself:
// the quantize is its preparation, the launch the fused projection.
int fused4_swapped(const Shape& s, const DeviceIo& io) {
    const int64_t n = s["n"], k = s["k"], mat = n * (k / QK8_0);
    const BlockQ8_0* w = io.input<BlockQ8_0>("w");
    float* y = io.output<float>("y");
    const BlockQ8_0* ws[4] = {w, w + 2 * mat, w + mat, w + 3 * mat};
    float* ys[4] = {y, y + n, y + 2 * n, y + 3 * n};
    cuda::proj_q8_0_fused4(ws, io.workspace<BlockQ8_0>("xq"), ys, n, k, static_cast<cudaStream_t>(io.stream));
    return 1;
}
// The pair's two matrices in each other's place (gate read as up): fused2's launch otherwise.
int fused2_swapped(const Shape& s, const DeviceIo& io) {
    const int64_t n = s["n"], k = s["k"], mat = n * (k / QK8_0);
    const BlockQ8_0* w = io.input<BlockQ8_0>("w");
    float* y = io.output<float>("y");
    const BlockQ8_0* ws[2] = {w + mat, w};
    float* ys[2] = {y, y + n};
    cuda::proj_q8_0_fused2(ws, io.workspace<BlockQ8_0>("xq"), ys, n, k, static_cast<cudaStream_t>(io.stream));
    return 1;
}
int hoist(const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_hoist(io.input<float>("x"), io.workspace<BlockQ8_0>("xq"), s["k"],
                                 static_cast<cudaStream_t>(io.stream));
}
int hoisted_stale(const Shape& s, const DeviceIo& io) {
    return cuda::mutants::proj_q8_0_hoisted_stale(io.input<float>("x"), io.input<BlockQ8_0>("w"), io.output<float>("y"),
                                                  s["n"], s["k"], s["g"], static_cast<cudaStream_t>(io.stream));
}
#endif

// Enough blocks per row and rows that a reordered sum changes some row's bits.
std::string many_sums(const Shape& s) {
    return bpr_of(s) >= 8 && s["n"] >= 64 ? "" : "needs k >= 256 and n >= 64 for a reordered sum to show";
}

BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "tree_ascending_model",
    .summary = "host model whose warp tree applies offsets 1, 2, 4, 8, 16",
    .model = tree_ascending_model, .valid = many_sums,
    .mutant = true, .expect = "golden_mismatch", .golden_as = "v2"});

BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "tree_ascending",
    .summary = "v2 kernel whose warp tree applies offsets 1, 2, 4, 8, 16",
    .valid = many_sums,
    .mutant = true, .expect = "value_mismatch", .golden_as = "v2",
    .launch = per_call(ProjQ8Defect::tree_ascending)});

// Every row is still written (all blocks are summed, in another order): a value mismatch, not
// unwritten bytes.
BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "width_off_by_one",
    .summary = "v2 with the width switch one block late: bpr 33 on 32 threads, 65 on 64",
    .valid = [](const Shape& s) -> std::string {
        return bpr_of(s) == 33 || bpr_of(s) == 65 ? "" : "only differs at k/32 = 33 or 65";
    },
    .mutant = true, .expect = "value_mismatch", .golden_as = "v2",
    .launch = per_call(ProjQ8Defect::width_off_by_one)});

BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "ragged_store",
    .summary = "v2 whose ragged last CUDA block stores up to 3 rows past n",
    .valid = [](const Shape& s) -> std::string {
        return s["g"] == 1 && s["n"] >= 1024 && s["n"] % 4 != 0 ? "" : "needs g = 1, n >= 1024, n % 4 != 0";
    },
    .mutant = true, .expect = "out_of_bounds", .golden_as = "v2",
    .launch = per_call(ProjQ8Defect::ragged_store)});

BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "fused4_swapped",
    .summary = "fused4 launched with matrices 1 and 2 in each other's place",
    .valid = [](const Shape& s) -> std::string { return s["g"] == 4 ? "" : "fused4 needs g == 4"; },
    .mutant = true, .expect = "value_mismatch", .golden_as = "fused4",
    .launch = BITGATE_ON_DEVICE(fused4_swapped), .prepare = BITGATE_ON_DEVICE(hoist)});

BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "fused2_swapped",
    .summary = "fused2 launched with its two matrices in each other's place",
    .valid = [](const Shape& s) -> std::string { return s["g"] == 2 ? "" : "fused2 needs g == 2"; },
    .mutant = true, .expect = "value_mismatch", .golden_as = "fused2",
    .launch = BITGATE_ON_DEVICE(fused2_swapped), .prepare = BITGATE_ON_DEVICE(hoist)});

// The defect does not depend on the shape; small single-matrix shapes keep the mutant check short
// (8 catalog lines) while leaving prop --mutants shapes to find it among (about 1 in 100 drawn).
BITGATE_VARIANT("proj_q8_0", VariantSpec{
    .name = "hoisted_stale",
    .summary = "hoisted path that re-quantizes only when x moves (a cache keyed on the pointer)",
    .valid = [](const Shape& s) -> std::string {
        return s["g"] == 1 && s["n"] * s["k"] <= 65536 ? "" : "runs only where g = 1 and n * k <= 65536";
    },
    .mutant = true, .expect = "stale_on_reuse", .golden_as = "hoisted",
    .launch = BITGATE_ON_DEVICE(hoisted_stale)});

}  // namespace
