// embed: every table type against a direct dequantization written from the bytes (f16 decoded by
// ldexp in double, the Q8_0 product exact in double), the table's two ends, out-of-range ids
// rejected before the table is read (host model, and the device launcher's preparation).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "device.hpp"
#include "embed.hpp"
#include "errors.hpp"
#include "gpu.hpp"
#include "host_run.hpp"
#include "registry.hpp"

using namespace bitgate;

namespace {

// IEEE binary16 from its fields, in double (exact): the independent decoding.
double f16_value(const uint8_t* p) {
    const unsigned h = unsigned(p[0]) | unsigned(p[1]) << 8;
    const int e = int(h >> 10 & 0x1f), m = int(h & 0x3ff);
    const double mag = e == 0 ? std::ldexp(double(m), -24) : std::ldexp(double(1024 + m), e - 25);
    return (h & 0x8000u) ? -mag : mag;
}

std::vector<uint8_t> table_bytes(size_t bytes, const char* profile, bool q8) {
    std::vector<uint8_t> t(bytes);
    const GenRequest r{.seed = 5, .profile = profile, .tensor = "table"};
    if (q8) inputs::fill_q8_0(t, r);
    else inputs::fill_f32(t, r, 64);
    return t;
}

Shape shape(int64_t n, int64_t d, int64_t vocab, int64_t type) {
    return Shape{{"n", "d", "vocab", "type"}, {n, d, vocab, type}};
}

}  // namespace

TEST(Embed, Q8_0EqualsDirectDequantizationFromTheBytes) {
    const int64_t d = 96, vocab = 37, nb = d / 32, rb = nb * 34;
    for (const char* p : {"uniform", "raw_q8", "zeros"}) {
        const auto t = table_bytes(size_t(vocab * rb), p, true);
        const std::vector<int32_t> ids = {36, 0, 5, 5, 17, 36};
        std::vector<float> out(ids.size() * size_t(d));
        ref::embed_q8_0(reinterpret_cast<const BlockQ8_0*>(t.data()), d, ids.data(), int64_t(ids.size()), out.data());
        for (size_t k = 0; k < ids.size(); ++k)
            for (int64_t c = 0; c < d; ++c) {
                const uint8_t* blk = t.data() + ids[k] * rb + (c / 32) * 34;
                // (float)d * (float)q has at most 11 + 8 significant bits: exact in float and double.
                const double want = f16_value(blk) * double(int8_t(blk[2 + c % 32]));
                const float got = out[k * size_t(d) + size_t(c)];
                ASSERT_EQ(f32_bits(got), f32_bits(float(want))) << p << " token " << k << " col " << c;
            }
    }
}

TEST(Embed, F16AndF32EqualTheirRows) {
    const int64_t d = 64, vocab = 9;
    std::vector<uint8_t> t16(size_t(vocab * d * 2));
    for (size_t i = 0; i < t16.size() / 2; ++i) {  // every 16-bit pattern class: subnormals, -0, large
        const uint16_t h = uint16_t((i * 40503u) & 0xfbffu);
        std::memcpy(&t16[i * 2], &h, 2);
    }
    const auto t32 = table_bytes(size_t(vocab * d * 4), "tiny", false);
    const std::vector<int32_t> ids = {8, 0, 3};
    std::vector<float> a(ids.size() * size_t(d)), b(a.size());
    ref::embed_f16(reinterpret_cast<const uint16_t*>(t16.data()), d, ids.data(), 3, a.data());
    ref::embed_f32(reinterpret_cast<const float*>(t32.data()), d, ids.data(), 3, b.data());
    for (size_t k = 0; k < 3; ++k) {
        for (int64_t c = 0; c < d; ++c) {
            const double want = f16_value(&t16[size_t((ids[k] * d + c) * 2)]);
            ASSERT_EQ(f32_bits(a[k * size_t(d) + size_t(c)]), f32_bits(float(want))) << k << " " << c;
        }
        EXPECT_EQ(std::memcmp(&b[k * size_t(d)], &t32[size_t(ids[k] * d * 4)], size_t(d) * 4), 0) << k;
    }
}

TEST(Embed, GeneratedIdsCoverBothEndsOfTheTable) {
    const FamilySpec& f = family("embed");
    const auto in = make_inputs(f, shape(3, 32, 1000, 2), 1, "uniform");
    int32_t ids[3];
    std::memcpy(ids, in[1].data(), 12);
    EXPECT_EQ(ids[0], 999);
    EXPECT_EQ(ids[1], 0);
    EXPECT_EQ(ref::embed_ids_problem(ids, 3, 1000), "");
}

TEST(Embed, OutOfRangeIdsAreRejectedBeforeTheTableIsRead) {
    const int32_t high[2] = {0, 4}, low[1] = {-1};
    EXPECT_EQ(ref::embed_ids_problem(high, 2, 4), "token 1: id 4 is outside [0, 4)");
    EXPECT_EQ(ref::embed_ids_problem(low, 1, 4), "token 0: id -1 is outside [0, 4)");
    const FamilySpec& f = family("embed");
    for (const char* v : {"f32", "f16", "q8_0"}) {
        const int64_t type = std::string(v) == "f32" ? 0 : std::string(v) == "f16" ? 1 : 2;
        const Shape s = shape(2, 32, 4, type);
        auto in = make_inputs(f, s, 1, "uniform");
        std::memcpy(in[1].data(), high, 8);
        try {
            run_model(f, variant(f, v), s, in, false);
            ADD_FAILURE() << v << ": an id past the table was accepted";
        } catch (const BadInput& e) {
            EXPECT_STREQ(e.what(), "ids: token 1: id 4 is outside [0, 4)") << v;
        }
    }
}

TEST(EmbedDevice, OutOfRangeIdsAreRejectedBeforeLaunch) {
    BITGATE_REQUIRE_GPU();
    const FamilySpec& f = family("embed");
    const Shape s = shape(2, 32, 4, 2);
    auto in = make_inputs(f, s, 1, "uniform");
    const int32_t high[2] = {0, 4};
    std::memcpy(in[1].data(), high, 8);
    DeviceBuffer table(in[0].size()), ids(in[1].size()), out(size_t(2 * 32 * 4));
    table.upload(in[0]);
    ids.upload(in[1]);
    out.fill(0xa5);
    DeviceIo io{.family = &f};
    io.in = {table.data(), ids.data()};
    io.out = {out.data()};
    const VariantSpec& q8 = variant(f, "q8_0");
    ASSERT_TRUE(q8.prepare);
    EXPECT_THROW(q8.prepare(s, io), BadInput);
    EXPECT_EQ(device_sync(), "");
    for (uint8_t b : out.download()) ASSERT_EQ(b, 0xa5) << "out was written";
}
