// swiglu: values known without the model (saturation, zero, signed zero, against double), the
// fused model against the unfused pair, and the kernels against the models on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "gpu.hpp"
#include "prefill_device.hpp"
#include "quantize_pad40_t.hpp"
#include "swiglu.hpp"

using namespace bitgate;

namespace {

std::vector<float> gen(size_t count, uint64_t row, const char* profile, const char* tensor) {
    std::vector<float> v(count);
    inputs::fill_f32({reinterpret_cast<uint8_t*>(v.data()), v.size() * 4},
                     GenRequest{.seed = 9, .profile = profile, .tensor = tensor}, row);
    return v;
}

struct Out {
    std::vector<float> y;
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
};

Out unfused(const std::vector<float>& g, const std::vector<float>& u, int64_t n, int64_t f) {
    Out o{std::vector<float>(size_t(n * f)), std::vector<uint8_t>(pad40_qs_bytes(n, f)),
          std::vector<uint32_t>(pad40_sda_bytes(n, f) / 4)};
    ref::swiglu_f32(g.data(), u.data(), o.y.data(), n, f);
    ref::quantize_pad40_t(o.y.data(), n, f, o.qs.data(), o.sda.data());
    return o;
}

Out fused(const std::vector<float>& g, const std::vector<float>& u, int64_t n, int64_t f, uint8_t poison) {
    Out o{std::vector<float>(size_t(n * f)), std::vector<uint8_t>(pad40_qs_bytes(n, f), poison),
          std::vector<uint32_t>(pad40_sda_bytes(n, f) / 4)};
    std::memset(o.sda.data(), poison, o.sda.size() * 4);
    ref::swiglu_quant_f32_t(g.data(), u.data(), o.y.data(), n, f, o.qs.data(), o.sda.data());
    return o;
}

bool same(const Out& a, const Out& b) {
    return std::memcmp(a.y.data(), b.y.data(), a.y.size() * 4) == 0 && a.qs == b.qs && a.sda == b.sda;
}

}  // namespace

TEST(Swiglu, SaturationZeroAndSignedZero) {
    EXPECT_EQ(f32_bits(ref::swiglu_value(0.0f, 5.0f)), 0u);        // 0 / 2 * 5
    EXPECT_EQ(ref::swiglu_value(100.0f, 1.0f), 100.0f);             // exp(-100) vanishes next to 1
    EXPECT_EQ(f32_bits(ref::swiglu_value(-100.0f, 2.0f)), 0x80000000u);  // exp(100) = inf: -100/inf = -0
    EXPECT_EQ(f32_bits(ref::swiglu_value(-100.0f, -2.0f)), 0u);     // -0 * -2 = +0
}

TEST(Swiglu, CloseToDoubleSilu) {
    for (float g : {-8.0f, -1.5f, -0.25f, 0.125f, 1.0f, 2.5f, 7.75f}) {
        const double want = double(g) / (1.0 + std::exp(-double(g))) * 1.5;
        const double got = ref::swiglu_value(g, 1.5f);
        EXPECT_LT(std::fabs(got - want), std::fabs(want) * 4e-7) << g;  // a few ulp: exp, +, /, * each round
    }
}

TEST(Swiglu, FusedModelEqualsUnfusedPairAndFillsTheTail) {
    for (const auto& [n, f] : {std::pair<int64_t, int64_t>{1, 32}, {65, 4864}, {63, 288}}) {
        for (const char* p : {"uniform", "outliers", "tiny", "signed_zero"}) {
            const auto g = gen(size_t(n * f), uint64_t(f), p, "g"), u = gen(size_t(n * f), uint64_t(f), p, "u");
            const Out a = fused(g, u, n, f, 0xa5);
            EXPECT_TRUE(same(a, unfused(g, u, n, f))) << n << " " << f << " " << p;
            EXPECT_TRUE(same(a, fused(g, u, n, f, 0x5a))) << "a plane byte was never written";
        }
    }
}

TEST(SwigluDevice, KernelsEqualModels) {
    BITGATE_REQUIRE_GPU();
    for (const auto& [n, f] : {std::pair<int64_t, int64_t>{1, 32}, {63, 4864}, {129, 4864}, {300, 18944},
                               {3325, 18944}}) {
        const auto g = gen(size_t(n * f), uint64_t(f), "outliers", "g"), u = gen(size_t(n * f), uint64_t(f), "normal", "u");
        const Out m = unfused(g, u, n, f);
        for (uint8_t poison : {uint8_t(0xa5), uint8_t(0x5a)}) {
            const auto a = test::run_prefill(test::PrefillKernel::swiglu_f32, n, f, g, u, poison);
            ASSERT_EQ(a.error, "");
            EXPECT_EQ(std::memcmp(a.y.data(), m.y.data(), m.y.size() * 4), 0) << "swiglu_f32 " << n << " " << f;
            const auto b = test::run_prefill(test::PrefillKernel::swiglu_quant, n, f, g, u, poison);
            ASSERT_EQ(b.error, "");
            EXPECT_EQ(std::memcmp(b.y.data(), m.y.data(), m.y.size() * 4), 0) << "fused out " << n << " " << f;
            EXPECT_EQ(std::memcmp(b.qs.data(), m.qs.data(), m.qs.size()), 0) << "fused qs " << n << " " << f;
            EXPECT_EQ(std::memcmp(b.sda.data(), m.sda.data(), m.sda.size() * 4), 0) << "fused sda " << n << " " << f;
        }
    }
}
