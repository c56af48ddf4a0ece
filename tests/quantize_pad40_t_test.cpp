// quantize_pad40_t: the plane's offset map (exhaustive and as a property), hand-built chunks whose
// quantization is known, the padded tail, and the kernel against the model on the device.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "gpu.hpp"
#include "prefill_device.hpp"
#include "quantize_pad40_t.hpp"

using namespace bitgate;

namespace {

struct Plane {
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
};

Plane quantize(const std::vector<float>& x, int64_t n, int64_t d, uint8_t poison = 0xa5) {
    Plane p{std::vector<uint8_t>(pad40_qs_bytes(n, d), poison), std::vector<uint32_t>(pad40_sda_bytes(n, d) / 4)};
    std::memset(p.sda.data(), poison, p.sda.size() * 4);
    ref::quantize_pad40_t(x.data(), n, d, p.qs.data(), p.sda.data());
    return p;
}

// Value j of chunk c of token t, read back through the layout as DESIGN states it.
int8_t q_at(const Plane& p, int64_t t, int64_t c, int j, int64_t nchunk) {
    const uint32_t r = uint32_t(t % 64), u = uint32_t(j / 4);
    const size_t off = size_t((t / 64) * nchunk + c) * 2048 + (r >> 2) * 128 +
                       ((((r & 3) * 2 + (u >> 2)) ^ ((r >> 2) & 7)) << 4) + (u & 3) * 4 + j % 4;
    return int8_t(p.qs[off]);
}

std::vector<float> profile_input(int64_t n, int64_t d, const char* profile, uint64_t seed) {
    std::vector<float> x(size_t(n * d));
    inputs::fill_f32({reinterpret_cast<uint8_t*>(x.data()), x.size() * 4},
                     GenRequest{.seed = seed, .profile = profile, .tensor = "x"}, uint64_t(d));
    return x;
}

}  // namespace

TEST(Pad40Layout, OffsetMapIsABijectionOntoTheTile) {
    std::vector<int> hits(kPad40TileBytes, 0);
    for (uint32_t r = 0; r < 64; ++r)
        for (uint32_t u = 0; u < 8; ++u) {
            const uint32_t off = pad40_qs_offset(r, u);
            ASSERT_EQ(off % 4, 0u);
            ASSERT_LT(off, uint32_t(kPad40TileBytes));
            for (uint32_t j = 0; j < 4; ++j) ++hits[off + j];
            const Pad40Where w = pad40_qs_where(off + 3);
            EXPECT_EQ(w.r, r);
            EXPECT_EQ(w.u, u);
            EXPECT_EQ(w.j, 3u);
        }
    for (int b = 0; b < kPad40TileBytes; ++b) ASSERT_EQ(hits[b], 1) << "byte " << b;
}

TEST(Pad40Layout, ATokensWordsFillOneAlignedSector) {
    for (uint32_t r = 0; r < 64; ++r) {
        const uint32_t sector = pad40_qs_offset(r, 0) / 32;
        for (uint32_t u = 1; u < 8; ++u) EXPECT_EQ(pad40_qs_offset(r, u) / 32, sector) << r << " " << u;
    }
}

RC_GTEST_PROP(Pad40Layout, WordsOfRandomTilesLandInTheirTileAndDecodeBack, ()) {
    const int64_t nchunk = *rc::gen::inRange<int64_t>(1, 600);
    const int64_t ntb = *rc::gen::inRange<int64_t>(1, 60);
    const int64_t t = *rc::gen::inRange<int64_t>(0, ntb * 64);
    const int64_t c = *rc::gen::inRange<int64_t>(0, nchunk);
    const uint32_t u = *rc::gen::inRange<uint32_t>(0, 8);
    const int64_t off = pad40_qs_at(t, c, u, nchunk);
    const int64_t tile = (t / 64) * nchunk + c;
    RC_ASSERT(off >= tile * 2048);
    RC_ASSERT(off + 4 <= (tile + 1) * 2048);
    const Pad40Where w = pad40_qs_where(uint32_t(off % 2048));
    RC_ASSERT(w.r == uint32_t(t % 64));
    RC_ASSERT(w.u == u);
    RC_ASSERT(pad40_sda_at(t, c, nchunk) == tile * 64 + t % 64);
    // A different (token, chunk, word) of the same plane never shares the word.
    const int64_t t2 = *rc::gen::inRange<int64_t>(0, ntb * 64);
    const int64_t c2 = *rc::gen::inRange<int64_t>(0, nchunk);
    const uint32_t u2 = *rc::gen::inRange<uint32_t>(0, 8);
    if (t2 != t || c2 != c || u2 != u) RC_ASSERT(pad40_qs_at(t2, c2, u2, nchunk) != off);
}

TEST(QuantizePad40, ChunkWithUnitScaleRoundsTiesToEven) {
    // amax 127 -> d = 1 exactly (f16 0x3c00), di = 1: q = rintf(x): 2.5 -> 2, 3.5 -> 4, -0.5 -> 0.
    float e[32] = {};
    const float v[] = {127.0f, -127.0f, 2.5f, 3.5f, -0.5f, -1.5f, 126.5f, 0.49f, -2.5f, 5.0f};
    const int8_t expect[] = {127, -127, 2, 4, 0, -2, 126, 0, -2, 5};
    int sum = 0;
    for (int j = 0; j < 10; ++j) e[j] = v[j], sum += expect[j];
    int8_t q[32];
    const uint32_t w = ref::pad40_quantize_chunk(e, q);
    EXPECT_EQ(pad40_sda_d(w), 0x3c00u);
    EXPECT_EQ(pad40_sda_ssum(w), sum);
    for (int j = 0; j < 10; ++j) EXPECT_EQ(q[j], expect[j]) << j;
    for (int j = 10; j < 32; ++j) EXPECT_EQ(q[j], 0) << j;
}

TEST(QuantizePad40, ScaleIsF16OfAmaxOver127AndNegativeSumsPack) {
    float e[32];
    for (int j = 0; j < 32; ++j) e[j] = -0.25f;  // d = 0.25/127, every q = -127, ssum = -4064
    int8_t q[32];
    const uint32_t w = ref::pad40_quantize_chunk(e, q);
    EXPECT_EQ(pad40_sda_d(w), f32_to_f16_rn(0.25f / 127.0f));
    EXPECT_EQ(pad40_sda_ssum(w), -4064);
    EXPECT_EQ(w >> 16, uint32_t(uint16_t(-4064)));
    for (int j = 0; j < 32; ++j) EXPECT_EQ(q[j], -127);
}

TEST(QuantizePad40, ZeroChunkAndTinyChunkAreDefined) {
    float e[32] = {};
    int8_t q[32];
    EXPECT_EQ(ref::pad40_quantize_chunk(e, q), 0u);
    // amax = 127 * 2^-149: d = 2^-149 (subnormal), 1/d overflows to inf: +x -> 127, -x -> -128,
    // 0 * inf = NaN -> 0, as the device's saturating conversion gives.
    e[0] = 127 * 0x1p-149f;
    e[1] = -127 * 0x1p-149f;
    const uint32_t w = ref::pad40_quantize_chunk(e, q);
    EXPECT_EQ(q[0], 127);
    EXPECT_EQ(q[1], -128);
    EXPECT_EQ(q[2], 0);
    EXPECT_EQ(pad40_sda_ssum(w), -1);
    EXPECT_EQ(pad40_sda_d(w), 0u);  // 2^-149 rounds to f16 zero
}

TEST(QuantizePad40, EveryByteWrittenAndPaddedTokensAreZero) {
    const int64_t n = 65, d = 96, nchunk = 3;
    const auto x = profile_input(n, d, "uniform", 3);
    const Plane a = quantize(x, n, d, 0xa5), b = quantize(x, n, d, 0x5a);
    EXPECT_EQ(a.qs, b.qs) << "a byte of qs depends on the poison: never written";
    EXPECT_EQ(a.sda, b.sda) << "a word of sda depends on the poison: never written";
    for (int64_t t = n; t < 128; ++t)
        for (int64_t c = 0; c < nchunk; ++c) {
            for (int j = 0; j < 32; ++j) ASSERT_EQ(q_at(a, t, c, j, nchunk), 0) << t;
            ASSERT_EQ(a.sda[size_t(pad40_sda_at(t, c, nchunk))], 0u) << t;
        }
    // A real token's bytes are its own chunk's quantization.
    int8_t q[32];
    const uint32_t w = ref::pad40_quantize_chunk(&x[size_t(64 * d + 2 * 32)], q);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(q_at(a, 64, 2, j, nchunk), q[j]) << j;
    EXPECT_EQ(a.sda[size_t(pad40_sda_at(64, 2, nchunk))], w);
}

TEST(QuantizePad40Device, KernelEqualsModel) {
    BITGATE_REQUIRE_GPU();
    const struct { int64_t n, d; const char* profile; } cases[] = {
        {1, 32, "uniform"}, {63, 96, "ties"}, {64, 640, "normal"}, {65, 896, "tiny"}, {129, 3584, "ties"},
        {300, 4864, "outliers"}, {127, 288, "zeros"}, {3325, 3584, "uniform"}};
    for (const auto& c : cases) {
        const auto x = profile_input(c.n, c.d, c.profile, 1);
        const Plane m = quantize(x, c.n, c.d);
        for (uint8_t poison : {uint8_t(0xa5), uint8_t(0x5a)}) {
            const auto o = test::run_prefill(test::PrefillKernel::quantize, c.n, c.d, x, {}, poison);
            ASSERT_EQ(o.error, "");
            EXPECT_EQ(std::memcmp(o.qs.data(), m.qs.data(), m.qs.size()), 0) << c.n << " " << c.d << " " << c.profile;
            EXPECT_EQ(std::memcmp(o.sda.data(), m.sda.data(), m.sda.size() * 4), 0) << c.n << " " << c.d;
        }
    }
}

#if defined(BITGATE_HAVE_CUDA)
// tests/pad40_round_device.cu: how many of the 2^32 f32 inputs the kernels' one-instruction
// rounding (cvt.rni.sat.s8.f32) maps differently from the model's pad40_round.
uint64_t pad40_round_device_mismatches(uint64_t* first_bad);
#endif

TEST(QuantizePad40Device, SaturatingConversionIsTheModelsRound) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    uint64_t first = 0;
    EXPECT_EQ(pad40_round_device_mismatches(&first), 0u) << "first at f32 bits 0x" << std::hex << first;
#endif
}
