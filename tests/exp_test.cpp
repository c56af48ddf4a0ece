// exp_det: spot values, the exhaustive accuracy proof against exp in double over all 2^32
// inputs (the figures docs/exp.md states), and host == device bit for bit over all 2^32 inputs.
// exp_det_nonpos: exp_det's bits on every argument <= 0 (and a NaN for every NaN), on the host
// and on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bitgate/exp.hpp"
#include "bitgate/f16.hpp"
#include "fma_clones.hpp"
#include "gpu.hpp"
#include "prefill_device.hpp"

using namespace bitgate;

namespace {

// Error of `got` in units of the float spacing at the exact value (2^-149 below 2^-126); 0 when
// got is the correctly rounded value; infinite when only one of them overflowed.
double ulp_err(float got, double exact) {
    const float ref = float(exact);
    if (std::isinf(got) || std::isinf(ref)) return f32_bits(got) == f32_bits(ref) ? 0.0 : INFINITY;
    int e = 0;
    std::frexp(exact, &e);
    const int E = exact == 0.0 ? -126 : std::max(e - 1, -126);
    return std::fabs(double(got) - exact) / std::ldexp(1.0, E - 23);
}

// f(lo, hi) over [first, last) in interleaved shards of `shard` patterns, on every hardware
// thread; the shards' results are combined by R::merge.
template <class R, class F>
R sharded(uint64_t first, uint64_t last, uint64_t shard, F f) {
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<R> part(nt);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < nt; ++t)
        ts.emplace_back([&, t] {
            for (uint64_t lo = first + uint64_t(t) * shard; lo < last; lo += uint64_t(nt) * shard)
                part[t].merge(f(lo, std::min(lo + shard, last)));
        });
    for (auto& t : ts) t.join();
    R all;
    for (const R& p : part) all.merge(p);
    return all;
}

struct Sweep {
    double max_normal = 0, max_subnormal = 0;  // by the correctly rounded result's range
    uint32_t worst = 0;
    uint64_t not_correctly_rounded = 0, nan_bad = 0;
    void merge(const Sweep& o) {
        if (std::max(o.max_normal, o.max_subnormal) > std::max(max_normal, max_subnormal)) worst = o.worst;
        max_normal = std::max(max_normal, o.max_normal);
        max_subnormal = std::max(max_subnormal, o.max_subnormal);
        not_correctly_rounded += o.not_correctly_rounded;
        nan_bad += o.nan_bad;
    }
};

// Patterns where two results differ: their number and the first. With nan_any, two NaNs of any
// bits agree (exp_det_nonpos leaves a NaN's bits open).
struct Mismatch {
    uint64_t count = 0, first = ~0ull;
    void merge(const Mismatch& o) {
        count += o.count;
        first = std::min(first, o.first);
    }
    void add(uint64_t b, uint32_t got, uint32_t want, bool nan_any) {
        const bool nans = std::isnan(f32_from_bits(got)) && std::isnan(f32_from_bits(want));
        if (got == want || (nan_any && nans)) return;
        ++count;
        first = std::min(first, b);
    }
};

// exp_det_nonpos against exp_det over bit patterns [lo, hi).
BITGATE_FMA_CLONES Mismatch nonpos_vs_exp_det(uint64_t lo, uint64_t hi) {
    Mismatch m;
    for (uint64_t b = lo; b < hi; ++b) {
        const float x = f32_from_bits(uint32_t(b));
        m.add(b, f32_bits(exp_det_nonpos(x)), f32_bits(exp_det(x)), true);
    }
    return m;
}

// Over bit patterns [lo, hi). Cheap expectations where the answer is known exactly: above 89 the
// result overflows, below -104 it is below 2^-150 (rounds to +0), and below 2^-25 in magnitude
// 1 + x + x^2/2 in double is exp(x) to far below a float ulp. Everything else against std::exp.
BITGATE_FMA_CLONES Sweep sweep(uint64_t lo, uint64_t hi) {
    Sweep s;
    for (uint64_t b = lo; b < hi; ++b) {
        const float x = f32_from_bits(uint32_t(b));
        const float y = exp_det(x);
        if (x != x) {
            s.nan_bad += f32_bits(y) != (uint32_t(b) | 0x00400000u);
            continue;
        }
        double exact;
        if (x > 89.0f) exact = INFINITY;
        else if (x < -104.0f) exact = 0.0;
        else if (std::fabs(x) < 0x1p-25f) exact = 1.0 + double(x) + 0.5 * double(x) * double(x);
        else exact = std::exp(double(x));
        const double err = ulp_err(y, exact);
        if (f32_bits(y) != f32_bits(float(exact))) ++s.not_correctly_rounded;
        double& mx = std::fabs(float(exact)) < 0x1p-126f && exact != 0.0 ? s.max_subnormal : s.max_normal;
        if (err > mx) {
            mx = err;
            if (err > std::max(s.max_normal, s.max_subnormal) - 1e-12) s.worst = uint32_t(b);
        }
    }
    return s;
}

}  // namespace

TEST(ExpDet, ExactSpecialValues) {
    EXPECT_EQ(f32_bits(exp_det(0.0f)), f32_bits(1.0f));
    EXPECT_EQ(f32_bits(exp_det(-0.0f)), f32_bits(1.0f));
    EXPECT_EQ(f32_bits(exp_det(INFINITY)), f32_bits(INFINITY));
    EXPECT_EQ(f32_bits(exp_det(-INFINITY)), 0u);  // +0
    EXPECT_EQ(f32_bits(exp_det(-104.0f)), 0u);
    EXPECT_EQ(f32_bits(exp_det(100.0f)), f32_bits(INFINITY));
    // NaN: quieted, sign and payload kept, the same on both sides.
    EXPECT_EQ(f32_bits(exp_det(f32_from_bits(0x7f800001u))), 0x7fc00001u);
    EXPECT_EQ(f32_bits(exp_det(f32_from_bits(0xffc01234u))), 0xffc01234u);
}

TEST(ExpDet, SpotValuesWithinOneUlpOfDouble) {
    // Values from the C library in double; the boundaries of overflow and of the subnormal range.
    const float xs[] = {1.0f, -1.0f, 0.5f, 10.0f, -10.0f, 0x1p-20f, -0x1p-20f, 0.34657359f, -0.34657359f,
                        88.72283172607421875f /* largest x with a finite exp */, -87.33654f /* 2^-126 */,
                        -100.0f /* subnormal */, -103.9f, 50.0f, -50.0f, 3.0e-8f, 20.5f};
    for (float x : xs) {
        const double ex = std::exp(double(x));
        EXPECT_LT(ulp_err(exp_det(x), ex), 1.0) << "x = " << x;
    }
    EXPECT_TRUE(std::isfinite(exp_det(88.72283172607421875f)));
    EXPECT_TRUE(std::isinf(exp_det(std::nextafter(88.72283172607421875f, 100.0f))));
}

TEST(ExpDet, IntegerMultiplesOfLn2GiveNearPowersOfTwo) {
    for (int k = -120; k <= 120; k += 7) {
        const double x = double(float(k * 0.6931471805599453));
        EXPECT_LT(ulp_err(exp_det(float(x)), std::exp(x)), 0.67) << k;
    }
}

// The accuracy proof: every one of the 2^32 inputs, sharded over the hardware threads (about a
// minute of CPU on an FMA-capable x86-64; the FMA clone of the loop is picked at load time).
TEST(ExpDetExhaustive, AllInputsAgainstDouble) {
    const Sweep all = sharded<Sweep>(0, 1ull << 32, 1ull << 22, sweep);
    std::printf("exp_det over 2^32 inputs: max %.4f ulp (normal results), %.4f ulp (subnormal results), "
                "worst x = %a, %llu not correctly rounded\n",
                all.max_normal, all.max_subnormal, double(f32_from_bits(all.worst)),
                (unsigned long long)all.not_correctly_rounded);
    // The bounds docs/exp.md states (measured, rounded up).
    EXPECT_LT(all.max_normal, 0.66);
    EXPECT_LT(all.max_subnormal, 0.77);
    EXPECT_EQ(all.nan_bad, 0u);
}

// Every argument exp_det_nonpos takes: +0, the positive NaNs and every pattern with the sign bit
// set (-0, the negatives, -inf, the negative NaNs), 2^31 + 2^23 patterns.
TEST(ExpDetNonpos, SameBitsAsExpDetOnEveryNonPositiveInput) {
    Mismatch m = sharded<Mismatch>(0x7f800001ull, 1ull << 32, 1ull << 22, nonpos_vs_exp_det);
    m.merge(nonpos_vs_exp_det(0, 1));
    EXPECT_EQ(m.count, 0u) << "first mismatch at x bits 0x" << std::hex << m.first;
}

// The comparison above can fail: past 64 ln 2 (k + 64 beyond the exponent range) the shortcut
// leaves exp_det, while up to 44 it still agrees.
TEST(ExpDetNonpos, TheCheckFailsOnPositiveArgumentsBeyondItsRange) {
    const uint64_t one = f32_bits(1.0f), b44 = f32_bits(44.0f), b89 = f32_bits(89.0f);
    EXPECT_EQ(sharded<Mismatch>(one, b44, 1ull << 16, nonpos_vs_exp_det).count, 0u);
    EXPECT_GT(sharded<Mismatch>(b44, b89, 1ull << 16, nonpos_vs_exp_det).count, 0u);
}

// Host == device, bit for bit, over [first, first + count) in chunks of 2^28; nonpos: the device
// runs exp_det_nonpos (NaN bits left open), else exp_det (every bit).
Mismatch device_against_host(uint64_t first, uint64_t count, bool nonpos) {
    const uint64_t chunk = 1u << 28;
    std::vector<uint32_t> dev(chunk);
    Mismatch all;
    for (uint64_t base = first; base < first + count; base += chunk) {
        const uint64_t n = std::min(chunk, first + count - base);
        const std::string err = test::exp_det_device(uint32_t(base), uint32_t(n), dev.data(), nonpos);
        if (!err.empty()) {
            ADD_FAILURE() << "device: " << err;
            return all;
        }
        all.merge(sharded<Mismatch>(0, n, 1ull << 22, [&](uint64_t lo, uint64_t hi) {
            Mismatch m;
            for (uint64_t i = lo; i < hi; ++i) {
                const float x = f32_from_bits(uint32_t(base + i));
                m.add(base + i, dev[i], f32_bits(nonpos ? exp_det_nonpos(x) : exp_det(x)), nonpos);
            }
            return m;
        }));
    }
    return all;
}

TEST(ExpDetDevice, HostEqualsDeviceOnAllInputs) {
    BITGATE_REQUIRE_GPU();
    const Mismatch m = device_against_host(0, 1ull << 32, false);
    EXPECT_EQ(m.count, 0u) << "first mismatch at x bits 0x" << std::hex << m.first;
}

TEST(ExpDetNonposDevice, HostEqualsDeviceOnEveryNonPositiveInput) {
    BITGATE_REQUIRE_GPU();
    Mismatch m = device_against_host(0x7f800001ull, (1ull << 32) - 0x7f800001ull, true);
    m.merge(device_against_host(0, 1, true));
    EXPECT_EQ(m.count, 0u) << "first mismatch at x bits 0x" << std::hex << m.first;
}
