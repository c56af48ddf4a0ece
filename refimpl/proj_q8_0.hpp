// Host model of proj_q8_0, the decode projection GEMV: y[r] = sum_b d_w[r,b] d_x[b] sum_j qw*qx.
// The float order (thread striding, per-thread fma order, warp xor tree, cross-warp order) is in
// kernels/include/bitgate/proj_q8_0_order.hpp; this model performs it literally, lane by lane.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "host_path.hpp"

namespace bitgate::ref {

// The order a kernel sums in: its logical width and the xor offsets in the order lanes apply
// them. Mutant models change one of them.
struct ProjQ8Order {
    int width = 128;                   // 32, 64 or 128 logical threads per row
    int tree[5] = {16, 8, 4, 2, 1};
};

// The exact int32 dot product of two blocks' quants.
int32_t q8_0_sumi(const BlockQ8_0& w, const BlockQ8_0& x);

// One matrix: y[r] for r in [0, n), from n rows of bpr weight blocks and bpr activation blocks.
// Rows are independent; big matrices are split over `threads` threads (0: one a core, at most 16),
// and `path` (host_path.hpp) picks the instructions: neither changes a byte. A path this CPU lacks
// is refused (std::invalid_argument).
void proj_q8_0(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t bpr, const ProjQ8Order& order,
               int threads = 0, HostPath path = HostPath::fastest);

// A whole variant: quantize x (k floats) with quantize_q8_0, then g matrices [g][n][k/32] -> y[g][n].
// Per-call, hoisted and fused paths all reduce to this: they quantize the same bytes and project
// in the same order.
void proj_q8_0_group(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                     const ProjQ8Order& order);

}  // namespace bitgate::ref
