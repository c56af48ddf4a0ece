// kv_store: the layout by hand (head-major cache, positions pos0..), round to nearest even on the
// f16 ties, every value against the nearest f16 found by search in double, and every cache byte
// outside the stored positions left exactly as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "host_run.hpp"
#include "kv_store.hpp"
#include "registry.hpp"

using namespace bitgate;

TEST(KvStore, HandComputedLayoutAndTies) {
    // n = 2 tokens, 2 heads, head_dim 4, ctx 5, pos0 = 3: token t head h lands at [h][3 + t].
    const float kv[16] = {1.0f, 2.0f, -0.5f, 0.0f,                            // t0 h0
                          1.0f + 0x1p-11f, 1.0f + 0x1.8p-10f, -0.0f, 65504.0f,  // t0 h1: ties, -0, max
                          3.0f, 4.0f, 5.0f, 6.0f,                             // t1 h0
                          65520.0f, 0x1p-25f, 0x1.8p-24f, -7.0f};               // t1 h1: inf, 0, subnormal tie
    std::vector<uint16_t> cache(2 * 5 * 4, 0x1234);
    ref::kv_store_f16(kv, 2, 2, 4, cache.data(), 5, 3);
    auto at = [&](int h, int p, int j) { return cache[size_t((h * 5 + p) * 4 + j)]; };
    EXPECT_EQ(at(0, 3, 0), 0x3c00);  // 1
    EXPECT_EQ(at(0, 3, 1), 0x4000);  // 2
    EXPECT_EQ(at(0, 3, 2), 0xb800);  // -0.5
    EXPECT_EQ(at(1, 3, 0), 0x3c00);  // 1 + 2^-11: the tie goes to the even 1
    EXPECT_EQ(at(1, 3, 1), 0x3c02);  // 1 + 3 * 2^-11: the tie goes to the even 1 + 2^-9
    EXPECT_EQ(at(1, 3, 2), 0x8000);  // -0
    EXPECT_EQ(at(1, 3, 3), 0x7bff);  // 65504
    EXPECT_EQ(at(0, 4, 3), 0x4600);  // 6
    EXPECT_EQ(at(1, 4, 0), 0x7c00);  // 65520 rounds to infinity
    EXPECT_EQ(at(1, 4, 1), 0x0000);  // 2^-25: half the smallest subnormal, ties to even 0
    EXPECT_EQ(at(1, 4, 2), 0x0002);  // 1.5 * 2^-24: ties to even 2 * 2^-24
    EXPECT_EQ(at(1, 4, 3), 0xc700);  // -7
    for (int h = 0; h < 2; ++h)
        for (int p = 0; p < 3; ++p)
            for (int j = 0; j < 4; ++j) EXPECT_EQ(at(h, p, j), 0x1234) << h << " " << p << " " << j;
}

TEST(KvStore, NearestF16BySearchAndTheRestOfTheCacheUntouched) {
    const FamilySpec& f = family("kv_store");
    const Shape s{{"n", "heads", "head_dim", "ctx", "pos0"}, {65, 2, 64, 200, 70}};
    for (const char* p : {"uniform", "outliers", "tiny"}) {
        const auto in = make_inputs(f, s, 1, p);
        const auto run = run_model(f, variant(f, "v1"), s, in, true);
        ASSERT_EQ(run.verdict, Verdict::ok);
        const auto* kv = reinterpret_cast<const float*>(in[0].data());
        const auto* before = reinterpret_cast<const uint16_t*>(in[1].data());
        const auto* after = reinterpret_cast<const uint16_t*>(run.out[0].data());
        for (int64_t h = 0; h < 2; ++h)
            for (int64_t pos = 0; pos < 200; ++pos)
                for (int64_t j = 0; j < 64; ++j) {
                    const size_t i = size_t((h * 200 + pos) * 64 + j);
                    if (pos < 70 || pos >= 135) {
                        ASSERT_EQ(after[i], before[i]) << "stray write at head " << h << " position " << pos;
                        continue;
                    }
                    const double x = kv[((pos - 70) * 2 + h) * 64 + j];
                    // No finite f16 is nearer to x than the stored one (values here are far below 65504).
                    const double got = f16_to_f32(after[i]);
                    const double step = std::ldexp(1.0, std::max(std::ilogb(got == 0 ? 0x1p-24 : got), -14) - 10);
                    ASSERT_LE(std::fabs(got - x), step / 2) << h << " " << pos << " " << j;
                    if (std::fabs(got - x) == step / 2) {  // a tie: the even significand
                        ASSERT_EQ(after[i] & 1, 0) << h << " " << pos << " " << j;
                    }
                }
    }
}
