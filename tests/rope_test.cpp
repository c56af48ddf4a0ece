// rope: the cos/sin table against double-precision libm over every position 0..32767 (the bound
// docs/rope.md proves), hand-computed rotations, the model against a double-precision rotation,
// in place == out of place, position validation, and host == device for the table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/rope_table.hpp"
#include "gpu.hpp"
#include "rope.hpp"

using namespace bitgate;

#if defined(BITGATE_HAVE_CUDA)
// tests/rope_device.cu: the table computed on the device over the same grid; mismatching entries.
uint64_t rope_table_device_mismatches(int64_t head_dim, float base, std::string* first);
#endif

namespace {

// docs/rope.md: |cos - cos_ref|, |sin - sin_ref| <= 2^-25 + 2^-40 for |theta| < 2^15.
constexpr double kTableBound = 0x1p-25 + 0x1p-40;

struct Sweep {
    double max_err = 0;
    uint64_t not_nearest = 0;  // entries that are not the float nearest to the double reference
};

Sweep sweep(int64_t head_dim, float base) {
    Sweep w;
    for (int64_t i = 0; i < head_dim / 2; ++i) {
        const double freq = std::pow(double(base), -2.0 * double(i) / double(head_dim));
        for (int32_t p = 0; p <= ref::kRopeMaxPos; ++p) {
            float c, s;
            rope_cos_sin(p, i, head_dim, base, &c, &s);
            const double theta = double(p) * freq, cr = std::cos(theta), sr = std::sin(theta);
            w.max_err = std::fmax(w.max_err, std::fmax(std::fabs(c - cr), std::fabs(s - sr)));
            w.not_nearest += (c != float(cr)) + (s != float(sr));
        }
    }
    return w;
}

}  // namespace

TEST(RopeTable, WithinTheDocumentedBoundOfDoubleOverEveryPosition) {
    for (int64_t hd : {64, 128})
        for (float base : {10000.0f, 1000000.0f}) {
            const Sweep w = sweep(hd, base);
            std::printf("rope table head_dim %lld base %.0f: max |err| = 2^-25 %+.3e, %llu of %lld values not the "
                        "nearest float\n",
                        (long long)hd, double(base), w.max_err - 0x1p-25, (unsigned long long)w.not_nearest,
                        (long long)(hd * (ref::kRopeMaxPos + 1)));
            EXPECT_LE(w.max_err, kTableBound) << hd << " " << base;
        }
}

TEST(RopeTable, ExactValues) {
    float c, s;
    rope_cos_sin(0, 5, 128, 1e6f, &c, &s);  // position 0: no rotation
    EXPECT_EQ(f32_bits(c), f32_bits(1.0f));
    EXPECT_EQ(f32_bits(s), 0u);
    EXPECT_EQ(rope_freq(0, 64, 1e6f), 1.0);  // pair 0 turns by pos radians
    rope_cos_sin(1, 0, 64, 1e6f, &c, &s);
    EXPECT_EQ(c, 0.540302306f);  // cos 1 and sin 1, correctly rounded (0x3f0a5140, 0x3f576aa4)
    EXPECT_EQ(s, 0.841470985f);
    // base^(-2i/d) at i = d/4 is 1/sqrt(base): 1e-2 for base 1e4 and 1e-3 for 1e6.
    EXPECT_NEAR(rope_freq(16, 64, 1e4f), 1e-2, 1e-17);
    EXPECT_NEAR(rope_freq(32, 128, 1e6f), 1e-3, 1e-18);
}

TEST(Rope, HandComputedRotation) {
    // head_dim 4 at position 2, base 100: pair 0 turns by 2 rad, pair 1 by 2 / 10 = 0.2 rad.
    const float x[4] = {1.0f, 2.0f, 0.5f, -1.0f};
    const int32_t pos[1] = {2};
    float y[4];
    ref::rope_neox_to(x, y, 1, 1, 4, pos, 100.0f);
    const double want[4] = {1.0 * std::cos(2.0) - 0.5 * std::sin(2.0), 2.0 * std::cos(0.2) + 1.0 * std::sin(0.2),
                            1.0 * std::sin(2.0) + 0.5 * std::cos(2.0), 2.0 * std::sin(0.2) - 1.0 * std::cos(0.2)};
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(y[j], want[j], 3e-7) << j;
}

TEST(Rope, ModelWithinRoundingOfDoubleRotationAndInPlaceAgrees) {
    const int64_t n = 65, heads = 3, hd = 128;
    std::vector<float> x(size_t(n * heads * hd));
    inputs::fill_f32({reinterpret_cast<uint8_t*>(x.data()), x.size() * 4},
                     GenRequest{.seed = 3, .profile = "normal", .tensor = "x"}, uint64_t(hd));
    std::vector<int32_t> pos(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) pos[size_t(t)] = int32_t((t * 7919) % 32768);
    pos[0] = 32767;
    std::vector<float> y(x.size()), z = x;
    ref::rope_neox_to(x.data(), y.data(), n, heads, hd, pos.data(), 1e6f);
    ref::rope_neox(z.data(), n, heads, hd, pos.data(), 1e6f);
    EXPECT_EQ(std::memcmp(y.data(), z.data(), y.size() * 4), 0) << "in place differs from out of place";
    double worst = 0;
    for (int64_t t = 0; t < n; ++t)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < hd / 2; ++i) {
                const size_t a = size_t((t * heads + h) * hd + i), b = a + size_t(hd / 2);
                const double th = double(pos[size_t(t)]) * std::pow(1e6, -2.0 * double(i) / double(hd));
                const double x0 = x[a], x1 = x[b];
                const double w0 = x0 * std::cos(th) - x1 * std::sin(th), w1 = x0 * std::sin(th) + x1 * std::cos(th);
                // cos/sin within 2^-25, two rounded products and a rounded sum: (|x0| + |x1|) 2^-22.
                const double lim = (std::fabs(x0) + std::fabs(x1)) * 0x1p-22;
                ASSERT_LE(std::fabs(y[a] - w0), lim) << t << " " << h << " " << i;
                ASSERT_LE(std::fabs(y[b] - w1), lim) << t << " " << h << " " << i;
                worst = std::fmax(worst, std::fabs(y[a] - w0) / (lim + 1e-300));
            }
    std::printf("rope model: worst error %.3f of its bound\n", worst);
}

TEST(Rope, PositionsOutsideTheTableAreRejected) {
    const int32_t good[3] = {0, 32767, 5}, low[2] = {3, -1}, high[1] = {32768};
    EXPECT_EQ(ref::rope_pos_problem(good, 3), "");
    EXPECT_EQ(ref::rope_pos_problem(low, 2), "token 1: position -1 is outside [0, 32767]");
    EXPECT_EQ(ref::rope_pos_problem(high, 1), "token 0: position 32768 is outside [0, 32767]");
}

TEST(RopeDevice, TableEqualsHostOverEveryPosition) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    for (int64_t hd : {64, 128})
        for (float base : {10000.0f, 1000000.0f}) {
            std::string first;
            EXPECT_EQ(rope_table_device_mismatches(hd, base, &first), 0u) << hd << " " << base << ": " << first;
        }
#endif
}
