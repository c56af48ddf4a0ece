// add and bias: against the sum in double rounded once to float (for two floats that is the
// IEEE float sum: double rounding is innocuous for +), signed zeros and infinities by hand, the
// in-place calls equal to the separate ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "add.hpp"
#include "bias.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"

using namespace bitgate;

namespace {

std::vector<float> gen(size_t count, uint64_t row, const char* profile, const char* tensor) {
    std::vector<float> v(count);
    inputs::fill_f32({reinterpret_cast<uint8_t*>(v.data()), v.size() * 4},
                     GenRequest{.seed = 11, .profile = profile, .tensor = tensor}, row);
    return v;
}

}  // namespace

TEST(Add, EqualsDoubleSumRoundedOnceAndInPlaceAgrees) {
    for (const char* p : {"uniform", "outliers", "tiny", "signed_zero"}) {
        const size_t n = 4099;  // a ragged tail for the kernel
        const auto a = gen(n, 896, p, "a"), b = gen(n, 896, "normal", "b");
        std::vector<float> y(n), z = a;
        ref::add_f32(a.data(), b.data(), y.data(), int64_t(n));
        ref::add_f32(z.data(), b.data(), z.data(), int64_t(n));
        EXPECT_EQ(std::memcmp(y.data(), z.data(), n * 4), 0) << p;
        for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(f32_bits(y[i]), f32_bits(float(double(a[i]) + double(b[i])))) << p << " " << i;
    }
}

TEST(Add, SignedZerosAndInfinities) {
    const float inf = std::numeric_limits<float>::infinity();
    const float a[4] = {-0.0f, -0.0f, 1e38f * 4.0f, 3e38f}, b[4] = {-0.0f, 0.0f, -1.0f, 3e38f};
    float y[4];
    ref::add_f32(a, b, y, 4);
    EXPECT_EQ(f32_bits(y[0]), 0x80000000u);  // -0 + -0 = -0
    EXPECT_EQ(f32_bits(y[1]), 0u);           // -0 + +0 = +0 (round to nearest)
    EXPECT_EQ(y[2], inf);
    EXPECT_EQ(y[3], inf);                    // overflow
}

TEST(Bias, EqualsDoubleSumRoundedOnceRowByRowAndInPlaceAgrees) {
    for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{65, 128}, {3, 5}, {1, 896}}) {
        const auto x = gen(size_t(rows * cols), uint64_t(cols), "outliers", "x");
        const auto bias = gen(size_t(cols), uint64_t(cols), "normal", "bias");
        std::vector<float> y(x.size()), z = x;
        ref::bias_f32_to(x.data(), bias.data(), y.data(), rows, cols);
        ref::bias_f32(z.data(), bias.data(), rows, cols);
        EXPECT_EQ(std::memcmp(y.data(), z.data(), y.size() * 4), 0);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) {
                const size_t i = size_t(r * cols + c);
                ASSERT_EQ(f32_bits(y[i]), f32_bits(float(double(x[i]) + double(bias[size_t(c)])))) << r << " " << c;
            }
    }
}
