// rms_norm_q8_0's host model: a hand-computed constant row, rows kept apart in their own blocks,
// and every Q8_0 value within half a step (and the f16 rounding of the step) of the value it encodes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "q8_0_rows_check.hpp"
#include "quantize_q8_0.hpp"
#include "rms_norm.hpp"
#include "rms_norm_q8_0.hpp"

namespace bitgate {
namespace {

// x = 2 everywhere, w = 1: y = 2 / sqrt(4 + 1e-6) rounds to 1.0f - 2^-24 or 1.0f; every block's
// maximum is that y, its scale f16(y / 127), and every value quantizes to 127.
TEST(RmsNormQ8_0, ConstantRowByHand) {
    const int64_t d = 64;
    std::vector<float> x(d, 2.0f), w(d, 1.0f), y(d);
    std::vector<BlockQ8_0> xq(d / QK8_0);
    ref::rms_norm_q8_0(x.data(), w.data(), y.data(), xq.data(), 1, d);
    const float want_y = float(2.0 / std::sqrt(4.0 + 1e-6));
    for (float v : y) EXPECT_NEAR(v, want_y, 2e-7f);
    for (const BlockQ8_0& b : xq) {
        EXPECT_EQ(b.d, f32_to_f16_rn(y[0] / 127.0f));
        for (int8_t q : b.qs) EXPECT_EQ(q, 127);
    }
}

// Three rows an order of magnitude apart: each row's blocks are that row's quantization alone
// (row r's blocks follow row r-1's), and each value decodes to within half a step of y (and
// what the step lost to f16).
TEST(RmsNormQ8_0, RowsInTheirOwnBlocksWithinHalfAStep) {
    const int64_t n = 3, d = 96, per = d / QK8_0;
    std::vector<float> x(static_cast<size_t>(n * d)), w(static_cast<size_t>(d)), y(static_cast<size_t>(n * d));
    for (int64_t i = 0; i < n * d; ++i) x[size_t(i)] = std::pow(10.0f, float(i / d)) * std::sin(0.37f * float(i));
    for (int64_t i = 0; i < d; ++i) w[size_t(i)] = 1.0f + 0.25f * std::cos(0.11f * float(i));
    std::vector<BlockQ8_0> xq(static_cast<size_t>(n * per));
    ref::rms_norm_q8_0(x.data(), w.data(), y.data(), xq.data(), n, d);
    std::vector<float> y_alone(static_cast<size_t>(d));
    for (int64_t r = 0; r < n; ++r) {
        ref::rms_norm_f32(x.data() + r * d, w.data(), y_alone.data(), 1, d);
        EXPECT_EQ(std::memcmp(y_alone.data(), y.data() + r * d, size_t(d) * 4), 0) << "row " << r;
        std::vector<BlockQ8_0> alone(static_cast<size_t>(per));
        ref::quantize_q8_0(y_alone.data(), alone.data(), d);
        EXPECT_EQ(std::memcmp(alone.data(), xq.data() + r * per, alone.size() * sizeof(BlockQ8_0)), 0) << "row " << r;
    }
    test::expect_q8_0_within_half_a_step(y.data(), xq.data(), n, d);
}

}  // namespace
}  // namespace bitgate
