// rms_norm: the lane order of the sum of squares against an expectation built by hand, the fused
// model against the unfused pair, the padded tail, and the kernels against the models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "gpu.hpp"
#include "prefill_device.hpp"
#include "quantize_pad40_t.hpp"
#include "rms_norm.hpp"
#include "rms_norm_inputs.hpp"

using namespace bitgate;

namespace {

const auto gen = test::rms_gen;
const auto weights = test::rms_weights;

struct Out {
    std::vector<float> y;
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
};

Out unfused(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t d) {
    Out o{std::vector<float>(size_t(n * d)), std::vector<uint8_t>(pad40_qs_bytes(n, d)),
          std::vector<uint32_t>(pad40_sda_bytes(n, d) / 4)};
    ref::rms_norm_f32(x.data(), w.data(), o.y.data(), n, d);
    ref::quantize_pad40_t(o.y.data(), n, d, o.qs.data(), o.sda.data());
    return o;
}

Out fused(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t d, uint8_t poison = 0xa5) {
    Out o{std::vector<float>(size_t(n * d)), std::vector<uint8_t>(pad40_qs_bytes(n, d), poison),
          std::vector<uint32_t>(pad40_sda_bytes(n, d) / 4)};
    std::memset(o.sda.data(), poison, o.sda.size() * 4);
    ref::rms_norm_quant_f32_t(x.data(), w.data(), o.y.data(), n, d, o.qs.data(), o.sda.data());
    return o;
}

bool same(const Out& a, const Out& b) {
    return a.y.size() == b.y.size() && std::memcmp(a.y.data(), b.y.data(), a.y.size() * 4) == 0 && a.qs == b.qs &&
           a.sda == b.sda;
}

}  // namespace

TEST(RmsNorm, SumOfSquaresFollowsTheLanesNotASerialLoop) {
    // d = 128: one float4 group per lane. Lane 0 holds 4096^2 = 2^24; lanes 1..31 hold 1 + 1.
    // Lanes: every partial sum is exact, ss = 2^24 + 62. A serial loop would lose each +1 at 2^24.
    std::vector<float> x(128, 0.0f);
    x[0] = 4096.0f;
    for (int l = 1; l < 32; ++l) x[size_t(4 * l)] = x[size_t(4 * l + 1)] = 1.0f;
    const float expect = 1.0f / std::sqrt(16777278.0f / 128.0f + 1e-6f);
    const float serial = 1.0f / std::sqrt(16777216.0f / 128.0f + 1e-6f);
    const float got = ref::rms_norm_scale(x.data(), 128);
    EXPECT_EQ(std::memcmp(&got, &expect, 4), 0) << got << " vs " << expect;
    EXPECT_NE(expect, serial);
}

TEST(RmsNorm, ConstantRowNormalizesToTheWeights) {
    std::vector<float> x(64, 3.0f), w = weights(64), y(64);
    ref::rms_norm_f32(x.data(), w.data(), y.data(), 1, 64);
    const float scale = 1.0f / std::sqrt(9.0f + 1e-6f);  // ss = 576 exactly, 576 / 64 = 9
    for (int i = 0; i < 64; ++i) EXPECT_EQ(y[size_t(i)], (3.0f * scale) * w[size_t(i)]) << i;
}

TEST(RmsNorm, FusedModelEqualsUnfusedPairAndFillsTheTail) {
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{1, 32}, {65, 640}, {129, 896}, {9, 3584}}) {
        for (const char* p : {"uniform", "tiny", "zeros", "signed_zero"}) {
            const auto x = gen(size_t(n * d), uint64_t(d), p, "x");
            const auto w = weights(d);
            const Out f = fused(x, w, n, d, 0xa5);
            EXPECT_TRUE(same(f, unfused(x, w, n, d))) << n << " " << d << " " << p;
            EXPECT_TRUE(same(f, fused(x, w, n, d, 0x5a))) << "a plane byte was never written";
        }
    }
}

TEST(RmsNormDevice, KernelsEqualModels) {
    BITGATE_REQUIRE_GPU();
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{1, 32}, {63, 640}, {65, 896}, {129, 3584}, {300, 5120},
                               {65, 4128}, {512, 1024}, {3325, 3584}}) {
        const auto x = gen(size_t(n * d), uint64_t(d), "normal", "x");
        const auto w = weights(d);
        const Out m = unfused(x, w, n, d);
        for (uint8_t poison : {uint8_t(0xa5), uint8_t(0x5a)}) {
            const auto a = test::run_prefill(test::PrefillKernel::rms_norm_f32, n, d, x, w, poison);
            ASSERT_EQ(a.error, "");
            EXPECT_EQ(std::memcmp(a.y.data(), m.y.data(), m.y.size() * 4), 0) << "rms_norm_f32 " << n << " " << d;
            const auto b = test::run_prefill(test::PrefillKernel::rms_norm_quant, n, d, x, w, poison);
            ASSERT_EQ(b.error, "");
            EXPECT_EQ(std::memcmp(b.y.data(), m.y.data(), m.y.size() * 4), 0) << "fused y " << n << " " << d;
            EXPECT_EQ(std::memcmp(b.qs.data(), m.qs.data(), m.qs.size()), 0) << "fused qs " << n << " " << d;
            EXPECT_EQ(std::memcmp(b.sda.data(), m.sda.data(), m.sda.size() * 4), 0) << "fused sda " << n << " " << d;
        }
    }
}
