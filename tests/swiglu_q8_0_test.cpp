// swiglu_q8_0's host model: zero gates by hand, rows kept apart in their own blocks, and every
// Q8_0 value within half a step (and the f16 rounding of the step) of the value it encodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "q8_0_rows_check.hpp"
#include "quantize_q8_0.hpp"
#include "swiglu.hpp"
#include "swiglu_q8_0.hpp"

namespace bitgate {
namespace {

// g = 0: SiLU(0) = 0 / (1 + 1) = 0, so out is +0 whatever u is, and every block is d = 0, qs 0.
TEST(SwigluQ8_0, ZeroGateByHand) {
    const int64_t n = 2, f = 64;
    std::vector<float> g(static_cast<size_t>(n * f), 0.0f), u(static_cast<size_t>(n * f), 3.5f);
    std::vector<float> out(static_cast<size_t>(n * f), -1.0f);
    std::vector<BlockQ8_0> xq(static_cast<size_t>(n * f / QK8_0));
    std::memset(xq.data(), 0xa5, xq.size() * sizeof(BlockQ8_0));
    ref::swiglu_q8_0(g.data(), u.data(), out.data(), xq.data(), n, f);
    for (float v : out) EXPECT_EQ(std::signbit(v) ? -1 : (v == 0.0f ? 0 : 1), 0) << v;
    for (const BlockQ8_0& b : xq) {
        EXPECT_EQ(b.d, 0u);
        for (int8_t q : b.qs) EXPECT_EQ(q, 0);
    }
}

// Three rows of different magnitudes: each row's blocks are that row's quantization alone (row
// r's blocks follow row r-1's), and each value decodes to within half a step of out, plus up to
// 127 times the f16 rounding of the step (relative 2^-11).
TEST(SwigluQ8_0, RowsInTheirOwnBlocksWithinHalfAStep) {
    const int64_t n = 3, f = 96, per = f / QK8_0;
    std::vector<float> g(static_cast<size_t>(n * f)), u(static_cast<size_t>(n * f)), out(static_cast<size_t>(n * f));
    for (int64_t i = 0; i < n * f; ++i) {
        g[size_t(i)] = 4.0f * std::sin(0.29f * float(i));
        u[size_t(i)] = std::pow(10.0f, float(i / f)) * std::cos(0.17f * float(i));
    }
    std::vector<BlockQ8_0> xq(static_cast<size_t>(n * per));
    ref::swiglu_q8_0(g.data(), u.data(), out.data(), xq.data(), n, f);
    std::vector<float> alone_out(static_cast<size_t>(f));
    std::vector<BlockQ8_0> alone(static_cast<size_t>(per));
    for (int64_t r = 0; r < n; ++r) {
        ref::swiglu_f32(g.data() + r * f, u.data() + r * f, alone_out.data(), 1, f);
        EXPECT_EQ(std::memcmp(alone_out.data(), out.data() + r * f, size_t(f) * 4), 0) << "row " << r;
        ref::quantize_q8_0(alone_out.data(), alone.data(), f);
        EXPECT_EQ(std::memcmp(alone.data(), xq.data() + r * per, alone.size() * sizeof(BlockQ8_0)), 0) << "row " << r;
    }
    test::expect_q8_0_within_half_a_step(out.data(), xq.data(), n, f);
}

}  // namespace
}  // namespace bitgate
