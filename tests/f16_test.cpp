// f32 <-> f16 conversion: the host functions against the CPU's F16C instructions (an independent
// implementation of IEEE round-to-nearest-even) over every f32, and against the device's
// __float2half_rn / __half2float over every input on a GPU.
#include <gtest/gtest.h>
#include <immintrin.h>

#include <atomic>
#include <thread>
#include <vector>

#include "bitgate/f16.hpp"
#include "gpu.hpp"

using namespace bitgate;

namespace {

__attribute__((target("f16c"))) uint16_t f16c_from_f32(float f) {
    // _mm_cvtps_ph, not _cvtss_sh: clang's _cvtss_sh is a macro built on a C99 compound literal.
    const __m128i h = _mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return static_cast<uint16_t>(_mm_extract_epi16(h, 0));
}
__attribute__((target("f16c"))) float f16c_to_f32(uint16_t h) { return _cvtsh_ss(h); }

bool have_f16c() { return __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2"); }

}  // namespace

TEST(F16, EveryF32RoundsAsF16cDoesAndNaNIsCanonical) {
    if (!have_f16c()) GTEST_SKIP() << "this CPU has no F16C instructions to compare with";
    std::atomic<uint64_t> mismatches{0}, first{~0ull};
    auto work = [&](uint64_t lo, uint64_t hi) {
        uint64_t bad = 0;
        for (uint64_t u = lo; u < hi; ++u) {
            const float f = f32_from_bits(uint32_t(u));
            const uint16_t got = f32_to_f16_rn(f);
            const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
            const uint16_t want = nan ? 0x7fff : f16c_from_f32(f);
            if (got != want) {
                if (!bad++) { uint64_t e = ~0ull; first.compare_exchange_strong(e, u); }
            }
        }
        mismatches += bad;
    };
    const uint64_t n = 1ull << 32;
    std::thread t(work, 0, n / 2);
    work(n / 2, n);
    t.join();
    EXPECT_EQ(mismatches.load(), 0u) << "first mismatch at f32 bits 0x" << std::hex << first.load();
}

TEST(F16, EveryF16WidensExactly) {
    if (!have_f16c()) GTEST_SKIP() << "this CPU has no F16C instructions to compare with";
    for (uint32_t h = 0; h < 65536; ++h) {
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) continue;  // NaNs: payload kept, checked below
        EXPECT_EQ(f32_bits(f16_to_f32(uint16_t(h))), f32_bits(f16c_to_f32(uint16_t(h)))) << std::hex << h;
    }
    EXPECT_NE(f16_to_f32(0x7e00) , f16_to_f32(0x7e00));  // NaN stays NaN
}

#if defined(BITGATE_HAVE_CUDA)
// tests/f16_device.cu: how many of the 2^32 f32 inputs the device converts differently.
uint64_t f16_device_mismatches(uint64_t* first_bad);
#endif

TEST(F16Device, HostEqualsFloat2HalfRnOnAllInputs) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    uint64_t first = 0;
    EXPECT_EQ(f16_device_mismatches(&first), 0u) << "first at f32 bits 0x" << std::hex << first;
#endif
}
