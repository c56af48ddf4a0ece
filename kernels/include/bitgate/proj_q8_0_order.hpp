// The float order of proj_q8_0, shared by the host model and the kernels so they cannot disagree
// on a dispatch rule.
//
// A row is summed by W logical threads (W = 32, 64 or 128: one, two or four logical warps).
// Thread t handles blocks t, t+W, t+2W, ... in ascending order: acc starts at +0.0f and per block
// acc = fmaf((float)sumi, d_w * d_x, acc), sumi the exact int32 dot product of the 32 quants and
// d_w * d_x one f32 multiply (round to nearest) of the two f16 scales widened to f32. Each logical
// warp then reduces with the xor tree below (every lane: v = v + shfl_xor(v, off)), and the row's
// value is warp 0's sum, plus warp 1's, plus warp 2's, ... in warp order.
//
// Why v2 may use fewer threads than v1's 128 and keep v1's bits: with bpr <= W every thread has
// at most one block, so threads 0..bpr-1 hold the same values for any W >= bpr and the others hold
// +0.0f. No partial sum is ever -0.0f: acc starts at +0.0f, and in round-to-nearest an fma or an
// add returns -0 only when both addends are -0 or a nonzero result underflows, which cannot happen
// here: f16 scales are multiples of 2^-24, so d_w * d_x is exact and a multiple of 2^-48, and so
// is every product and every rounded partial sum; nonzero ones are at least 2^-48, far above the
// f32 subnormals. So adding the idle lanes' and warps' +0 changes nothing: the same bits. tests/proj_q8_0_test.cpp checks it on the host; the device claim checks it
// on the kernels.
#pragma once
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate {

// v2's logical width from blocks per row.
BITGATE_HD constexpr int proj_q8_0_v2_width(int64_t bpr) { return bpr <= 32 ? 32 : bpr <= 64 ? 64 : 128; }

// v1's width, fixed.
inline constexpr int proj_q8_0_v1_width = 128;

// Warp xor-shuffle offsets, in the order every lane applies them.
inline constexpr int proj_q8_0_tree[5] = {16, 8, 4, 2, 1};

}  // namespace bitgate
