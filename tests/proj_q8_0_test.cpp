// proj_q8_0: the shared primitives, the host model's float order against hand-derived values,
// the width claim (v2's width gives v1's bits) on the host, 160,000 rows at every blocks-per-row
// of the real-model catalog, and the launchers against the model on a GPU.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "bitgate/q8_words.hpp"
#include "gpu.hpp"
#include "host_run.hpp"
#include "proj_q8_0.hpp"
#include "quantize_q8_0.hpp"

#if defined(BITGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "../kernels/proj_q8_0.cuh"
#include "graph_replay.hpp"
#endif

namespace {

using namespace bitgate;

// A small, fast generator for test data (splitmix64).
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return inputs::mix64(s += 0x9e3779b97f4a7c15ull); }
};

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

uint16_t f16_of(float v) { return f32_to_f16_rn(v); }

// A block with qs[0] = a, qs[1..] = 0 and scale d (exact in f16): sumi against another such block
// is a * b, so a row's terms are chosen exactly.
BlockQ8_0 unit_block(int a, float d) {
    BlockQ8_0 b{};
    b.d = f16_of(d);
    b.qs[0] = int8_t(a);
    return b;
}

float model_row(const std::vector<BlockQ8_0>& w, const std::vector<BlockQ8_0>& x, int width, const int (&tree)[5]) {
    ref::ProjQ8Order order{.width = width};
    std::copy(tree, tree + 5, order.tree);
    float y;
    ref::proj_q8_0(w.data(), x.data(), &y, 1, int64_t(x.size()), order);
    return y;
}

float model_row(const std::vector<BlockQ8_0>& w, const std::vector<BlockQ8_0>& x, int width) {
    return model_row(w, x, width, proj_q8_0_tree);
}

constexpr int kAscending[5] = {1, 2, 4, 8, 16};
const float kTiny = std::ldexp(1.0f, -24);  // half an ulp of 1.0f

// ------------------------------------------------------------------------------------------
// Primitives.

TEST(ProjQ8Primitives, GetIntB2AtEveryAlignmentOfABlockStream) {
    alignas(16) uint8_t raw[17 * sizeof(BlockQ8_0)];
    Rng rng(1);
    for (auto& b : raw) b = uint8_t(rng.next());
    std::set<uintptr_t> residues;
    for (int b = 0; b < 17; ++b) {
        const uint8_t* qs = raw + b * sizeof(BlockQ8_0) + 2;
        for (int j = 0; j < 8; ++j) {
            residues.insert(reinterpret_cast<uintptr_t>(qs + 4 * j) % 16);
            EXPECT_EQ(uint32_t(get_int_b2(qs, j)), le32(qs + 4 * j)) << "block " << b << " word " << j;
        }
    }
    EXPECT_EQ(residues.size(), 8u);  // every even address mod 16
}

TEST(ProjQ8Primitives, BlockWordsFromAlignedWordsAtEveryOffset) {
    constexpr int nblocks = 32;
    std::vector<uint32_t> words((nblocks * sizeof(BlockQ8_0) + 16) / 4);
    std::vector<uint8_t> bytes(words.size() * 4);
    Rng rng(2);
    for (auto& b : bytes) b = uint8_t(rng.next());
    std::memcpy(words.data(), bytes.data(), bytes.size());
    for (int t = 0; t < nblocks; ++t) {
        const uint32_t off = uint32_t(t * sizeof(BlockQ8_0));
        const Q8Words got = q8_0_block_words(words.data(), off);
        EXPECT_EQ(got.d, uint16_t(bytes[off] | bytes[off + 1] << 8)) << "block " << t;
        for (int j = 0; j < 8; ++j) EXPECT_EQ(uint32_t(got.qs[j]), le32(&bytes[off + 2 + 4 * j])) << "block " << t << " word " << j;
    }
}

int32_t dp4a_reference(int32_t a, int32_t b, int32_t c) {
    int8_t ab[4], bb[4];
    std::memcpy(ab, &a, 4);  // little-endian: byte i is bits 8i .. 8i+7, as dp4a reads them
    std::memcpy(bb, &b, 4);
    int64_t s = c;
    for (int i = 0; i < 4; ++i) s += int64_t(ab[i]) * int64_t(bb[i]);
    return int32_t(uint32_t(uint64_t(s)));  // the device wraps at 32 bits
}

TEST(ProjQ8Primitives, Dp4aMatchesScalarProducts) {
    const int8_t edges[] = {-128, -127, -1, 0, 1, 126, 127};
    const int32_t cs[] = {INT32_MIN, -1, 0, 1, INT32_MAX, 524288, -524288};
    int64_t checked = 0;
    // Every a and b whose bytes are all edge values: 7^8 pairs.
    for (int i = 0; i < 7 * 7 * 7 * 7; ++i) {
        uint32_t a = 0;
        for (int p = 0, r = i; p < 4; ++p, r /= 7) a |= uint32_t(uint8_t(edges[r % 7])) << (8 * p);
        for (int jb = 0; jb < 7 * 7 * 7 * 7; ++jb) {
            uint32_t b = 0;
            for (int p = 0, r = jb; p < 4; ++p, r /= 7) b |= uint32_t(uint8_t(edges[r % 7])) << (8 * p);
            const int32_t c = cs[(i + jb) % 7];
            ASSERT_EQ(dp4a(int32_t(a), int32_t(b), c), dp4a_reference(int32_t(a), int32_t(b), c));
            ++checked;
        }
    }
    Rng rng(3);
    for (int i = 0; i < 5'000'000; ++i) {
        const uint64_t r = rng.next(), q = rng.next();
        const int32_t a = int32_t(uint32_t(r)), b = int32_t(uint32_t(r >> 32)), c = int32_t(uint32_t(q));
        ASSERT_EQ(dp4a(a, b, c), dp4a_reference(a, b, c)) << a << " " << b << " " << c;
        ++checked;
    }
    EXPECT_GE(checked, 10'000'000);
}

TEST(ProjQ8Primitives, FunnelShiftClampsAt32) {
    EXPECT_EQ(funnelshift_rc(0x11223344u, 0xaabbccddu, 0), 0x11223344u);
    EXPECT_EQ(funnelshift_rc(0x11223344u, 0xaabbccddu, 16), 0xccdd1122u);
    EXPECT_EQ(funnelshift_rc(0x11223344u, 0xaabbccddu, 32), 0xaabbccddu);
    EXPECT_EQ(funnelshift_rc(0x11223344u, 0xaabbccddu, 40), 0xaabbccddu);
}

TEST(ProjQ8Primitives, V2WidthSwitchesAt32And64) {
    EXPECT_EQ(proj_q8_0_v2_width(1), 32);
    EXPECT_EQ(proj_q8_0_v2_width(32), 32);
    EXPECT_EQ(proj_q8_0_v2_width(33), 64);
    EXPECT_EQ(proj_q8_0_v2_width(64), 64);
    EXPECT_EQ(proj_q8_0_v2_width(65), 128);
    EXPECT_EQ(proj_q8_0_v2_width(592), 128);
}

// ------------------------------------------------------------------------------------------
// The model's float order, against values derived by hand.

TEST(ProjQ8Model, SingleBlockIsTheExactProduct) {
    BlockQ8_0 w{}, x{};
    w.d = f16_of(0.5f);
    x.d = f16_of(0.25f);
    int expect = 0;
    for (int j = 0; j < 32; ++j) {
        w.qs[j] = int8_t(j - 16);
        x.qs[j] = int8_t(3 - j % 7);
        expect += (j - 16) * (3 - j % 7);
    }
    for (int width : {32, 64, 128}) EXPECT_EQ(model_row({w}, {x}, width), float(expect) * 0.125f);
    w.qs[0] = -128;  // the extreme bytes a GGUF file may hold
    x.qs[0] = -128;
    expect += 16384 - (-16) * 3;
    EXPECT_EQ(model_row({w}, {x}, 128), float(expect) * 0.125f);
}

// Lane 0 holds 1.0, lanes 16 and 17 hold 2^-24 each. Tree 16, 8, 4, 2, 1 pairs 0 with 16 first:
// 1 + 2^-24 rounds to 1 (tie to even) and then 1 + 2^-24 again: 1.0. The ascending tree pairs
// 16 with 17 first: 2^-23, and 1 + 2^-23 is exact.
TEST(ProjQ8Model, WarpTreeOrderIsSixteenFirst) {
    std::vector<BlockQ8_0> w(18, unit_block(0, 1.0f)), x(18, unit_block(0, 1.0f));
    w[0] = unit_block(1, 1.0f), x[0] = unit_block(1, 1.0f);
    for (int b : {16, 17}) w[b] = unit_block(1, 0x1p-12f), x[b] = unit_block(1, 0x1p-12f);
    EXPECT_EQ(model_row(w, x, 32), 1.0f);
    EXPECT_EQ(model_row(w, x, 32, kAscending), 1.0f + 2 * kTiny);
}

// Warp 0 holds 1.0, warps 1 and 2 hold 2^-24: in warp order, (1 + 2^-24) + 2^-24 = 1.0; summed
// from the last warp it would be 1 + 2^-23.
TEST(ProjQ8Model, CrossWarpSumIsInWarpOrder) {
    std::vector<BlockQ8_0> w(65, unit_block(0, 1.0f)), x(65, unit_block(0, 1.0f));
    w[0] = unit_block(1, 1.0f), x[0] = unit_block(1, 1.0f);
    for (int b : {32, 64}) w[b] = unit_block(1, 0x1p-12f), x[b] = unit_block(1, 0x1p-12f);
    EXPECT_EQ(model_row(w, x, 128), 1.0f);
}

// bpr = 33. Block 1 is 1.0, blocks 0 and 32 are 2^-24. On 32 threads, thread 0 sums blocks 0 and
// 32 first (2^-23) and the tree adds 1.0: 1 + 2^-23. On 64 or 128 threads block 32 is warp 1's and
// comes last: (2^-24 + 1) + 2^-24 = 1.0. So v2's width at bpr 33 (64) keeps v1's bits; 32 would not.
TEST(ProjQ8Model, PerThreadOrderAndTheWidthSwitch) {
    std::vector<BlockQ8_0> w(33, unit_block(0, 1.0f)), x(33, unit_block(0, 1.0f));
    w[1] = unit_block(1, 1.0f), x[1] = unit_block(1, 1.0f);
    for (int b : {0, 32}) w[b] = unit_block(1, 0x1p-12f), x[b] = unit_block(1, 0x1p-12f);
    EXPECT_EQ(model_row(w, x, 32), 1.0f + 2 * kTiny);
    EXPECT_EQ(model_row(w, x, 64), 1.0f);
    EXPECT_EQ(model_row(w, x, 128), 1.0f);
    EXPECT_EQ(proj_q8_0_v2_width(33), 64);
}

// The fma per block: acc = fma(sumi, d, acc) keeps the product exact before adding. With
// acc = 1 (block 0) and block 128 = 3 * (1 + 2^-10)^2 on the same thread (W = 128):
// exact 1 + 3(1 + 2^-9 + 2^-20) rounds once.
TEST(ProjQ8Model, EachBlockIsOneFusedMultiplyAdd) {
    std::vector<BlockQ8_0> w(129, unit_block(0, 1.0f)), x(129, unit_block(0, 1.0f));
    w[0] = unit_block(1, 1.0f), x[0] = unit_block(1, 1.0f);
    const float d = 1.0f + 0x1p-10f;  // exact in f16
    w[128] = unit_block(3, d), x[128] = unit_block(1, d);
    const float dd = d * d;  // d_w * d_x rounded to f32: 1 + 2^-9 + 2^-20 is exact in f32
    ASSERT_EQ(double(dd), (1.0 + 0x1p-10) * (1.0 + 0x1p-10));
    const double exact = 1.0 + 3.0 * double(dd);
    EXPECT_EQ(model_row(w, x, 128), float(exact));  // one rounding of the exact value
}

// acc starts at +0.0f: a row whose every product is -0 (negative d_w, d_x = 0) gives +0.
TEST(ProjQ8Model, ZeroProductsSumToPositiveZero) {
    std::vector<BlockQ8_0> w(70, unit_block(5, -1.0f)), x(70, unit_block(3, 0.0f));
    for (int width : {32, 64, 128}) {
        const float y = model_row(w, x, width);
        EXPECT_EQ(f32_bits(y), 0u) << "width " << width;
    }
}

// Random rows with arbitrary finite f16 scales stay within the rounding bound of the exact
// (double) sum: catches a lost block or a wrong scale, whatever the order.
TEST(ProjQ8Model, WithinRoundingBoundOfExactSum) {
    Rng rng(4);
    for (int bpr : {1, 7, 32, 33, 64, 65, 129, 448, 592}) {
        const int n = 64;
        std::vector<BlockQ8_0> w(size_t(n) * bpr), x(static_cast<size_t>(bpr));
        for (auto& b : w) {
            b.d = f16_of(float(int(rng.next() % 2001) - 1000) * 0x1p-14f);
            for (auto& q : b.qs) q = int8_t(rng.next());
        }
        for (auto& b : x) {
            b.d = f16_of(float(int(rng.next() % 1000) + 1) * 0x1p-12f);
            for (auto& q : b.qs) q = int8_t(rng.next());
        }
        std::vector<float> y(n);
        ref::proj_q8_0(w.data(), x.data(), y.data(), n, bpr, {.width = proj_q8_0_v2_width(bpr)});
        for (int r = 0; r < n; ++r) {
            double exact = 0, mag = 0;
            for (int b = 0; b < bpr; ++b) {
                const BlockQ8_0& wb = w[size_t(r) * bpr + b];
                int64_t s = 0;
                for (int j = 0; j < 32; ++j) s += int64_t(wb.qs[j]) * x[size_t(b)].qs[j];
                const double t = double(s) * double(f16_to_f32(wb.d)) * double(f16_to_f32(x[size_t(b)].d));
                exact += t;
                mag += std::fabs(t);
            }
            const double bound = double(bpr + 10) * 0x1p-24 * mag;
            EXPECT_LE(std::fabs(double(y[size_t(r)]) - exact), bound) << "bpr " << bpr << " row " << r;
        }
    }
}

// ------------------------------------------------------------------------------------------
// The width claim: v2's width gives v1's bytes, for any data.

std::vector<BlockQ8_0> random_blocks(Rng& rng, size_t count) {
    std::vector<BlockQ8_0> v(count);
    for (auto& b : v) {
        const uint64_t r = rng.next();
        switch (r % 8) {  // scales: arbitrary finite f16 (any sign, subnormal), zeros, and -0
            case 0: b.d = 0; break;
            case 1: b.d = 0x8000; break;
            default: b.d = uint16_t(r >> 16); if ((b.d & 0x7c00u) == 0x7c00u) b.d &= 0xfbffu;
        }
        for (auto& q : b.qs) {
            const uint64_t s = rng.next();
            q = (s & 0xf) == 0 ? int8_t(-128) : (s & 0xf) == 1 ? int8_t(127) : int8_t(s >> 8);
        }
    }
    return v;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

RC_GTEST_PROP(ProjQ8Model, V2WidthGivesV1Bytes, ()) {
    const int bpr = *rc::gen::inRange(1, 129);
    const int n = *rc::gen::inRange(1, 9);
    const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
    Rng rng(seed);
    const auto w = random_blocks(rng, size_t(n) * bpr);
    const auto x = random_blocks(rng, size_t(bpr));
    std::vector<float> v1(n), v2(n);
    ref::proj_q8_0(w.data(), x.data(), v1.data(), n, bpr, {.width = proj_q8_0_v1_width});
    ref::proj_q8_0(w.data(), x.data(), v2.data(), n, bpr, {.width = proj_q8_0_v2_width(bpr)});
    RC_ASSERT(same_bytes(v1, v2));
    // Any width at least bpr gives the same bytes, not only v2's.
    for (int width : {32, 64}) {
        if (width < bpr) continue;
        std::vector<float> yw(n);
        ref::proj_q8_0(w.data(), x.data(), yw.data(), n, bpr, {.width = width});
        RC_ASSERT(same_bytes(v1, yw));
    }
}

// Every SIMD path of the host model is the scalar definition's operations: byte for byte over
// random blocks (-128 and 127 quants, subnormal, zero and -0 scales), every width and the mutants'
// trees, bpr below, at and past multiples of 8, and any thread count. With infinite and NaN scales
// the bytes match once NaNs are canonical, as the engine compares f32 outputs: x86 picks which
// of two NaN operands a result carries by the instruction's operand order, which the compiler
// chooses for scalar code.
TEST(ProjQ8Model, SimdPathsEqualScalarPath) {
    auto canonical = [](std::vector<float> v) {
        canonicalize_nans(v);
        return v;
    };
    int compared = 0;
    for (const auto path : {ref::HostPath::avx2, ref::HostPath::avx512_vnni, ref::HostPath::fastest}) {
        if (!ref::host_path_available(path)) {
            std::printf("[ NOTE     ] this CPU has no %s path: not compared\n", ref::host_path_name(path));
            continue;
        }
        Rng rng(17);
        for (int bpr : {1, 7, 8, 9, 28, 33, 112, 152, 157})
            for (int width : {32, 64, 128})
                for (const auto& tree : {proj_q8_0_tree, kAscending})
                    for (bool nonfinite : {false, true}) {
                        const int n = 37;
                        auto w = random_blocks(rng, size_t(n) * bpr);
                        auto x = random_blocks(rng, size_t(bpr));
                        if (nonfinite) {
                            w[size_t(rng.next() % w.size())].d = 0x7c00;  // +inf
                            w[size_t(rng.next() % w.size())].d = 0xfe01;  // a NaN with a payload
                            x[size_t(rng.next() % x.size())].d = 0xfc00;  // -inf
                        }
                        ref::ProjQ8Order order{.width = width};
                        std::copy(tree, tree + 5, order.tree);
                        std::vector<float> plain(n), fast(n, -1.0f);
                        ref::proj_q8_0(w.data(), x.data(), plain.data(), n, bpr, order, 1, ref::HostPath::scalar);
                        for (int threads : {1, 3}) {
                            ref::proj_q8_0(w.data(), x.data(), fast.data(), n, bpr, order, threads, path);
                            if (nonfinite)
                                ASSERT_TRUE(same_bytes(canonical(fast), canonical(plain)))
                                    << ref::host_path_name(path) << " bpr " << bpr << " width " << width;
                            else
                                ASSERT_TRUE(same_bytes(fast, plain))
                                    << ref::host_path_name(path) << " bpr " << bpr << " width " << width;
                            ++compared;
                        }
                    }
    }
    EXPECT_GT(compared, 0);
}

// ------------------------------------------------------------------------------------------
// 160,000 rows at every blocks-per-row of the real-model catalog (k = 128, 896, 3584, 4864, 7168,
// 14336, 18944): the width claim where v2's width is not 128 (k <= 2048), and for every row the
// rounding bound against the exact sum. Streamed in batches, two threads: a few seconds.

struct RowCheck {
    int64_t rows = 0, out_of_bound = 0, claim_diffs = 0;
};

void check_rows(int bpr, const std::vector<BlockQ8_0>& xq, uint64_t seed, int64_t rows, RowCheck& out) {
    constexpr int64_t batch = 2000;
    std::vector<BlockQ8_0> w(size_t(batch) * bpr);
    std::vector<float> y128(batch), yv2(batch), dx(static_cast<size_t>(bpr));
    for (int b = 0; b < bpr; ++b) dx[size_t(b)] = f16_to_f32(xq[size_t(b)].d);
    const int v2w = proj_q8_0_v2_width(bpr);
    Rng rng(seed);
    for (int64_t done = 0; done < rows; done += batch) {
        const int64_t nb = std::min(batch, rows - done);
        // Weights as a file holds them: random bytes, positive scales near real ones, some -128.
        for (size_t i = 0; i < size_t(nb) * bpr; ++i) {
            BlockQ8_0& b = w[i];
            uint64_t r = rng.next();
            b.d = uint16_t(((5 + r % 4) << 10) | ((r >> 8) & 0x3ffu));
            for (int j = 0; j < 32; j += 8) {
                r = rng.next();
                std::memcpy(&b.qs[j], &r, 8);
            }
        }
        // One model thread each: check_rows itself runs on both cores.
        ref::proj_q8_0(w.data(), xq.data(), y128.data(), nb, bpr, {.width = 128}, 1);
        if (v2w != 128) {
            ref::proj_q8_0(w.data(), xq.data(), yv2.data(), nb, bpr, {.width = v2w}, 1);
            out.claim_diffs += std::memcmp(y128.data(), yv2.data(), size_t(nb) * 4) != 0;
        }
        for (int64_t r = 0; r < nb; ++r) {
            double exact = 0, mag = 0;
            for (int b = 0; b < bpr; ++b) {
                const BlockQ8_0& wb = w[size_t(r) * bpr + b];
                const double t = double(ref::q8_0_sumi(wb, xq[size_t(b)])) * double(f16_to_f32(wb.d)) * double(dx[size_t(b)]);
                exact += t;
                mag += std::fabs(t);
            }
            out.out_of_bound += std::fabs(double(y128[size_t(r)]) - exact) > double(bpr + 10) * 0x1p-24 * mag;
        }
        out.rows += nb;
    }
}

TEST(ProjQ8Model, OneHundredSixtyThousandRowsAtEveryCatalogBlocksPerRow) {
    for (int k : {128, 896, 3584, 4864, 7168, 14336, 18944}) {
        const int bpr = k / QK8_0;
        std::vector<uint8_t> xbytes(size_t(k) * 4);
        inputs::fill_f32(xbytes, GenRequest{.seed = 7, .profile = "normal", .tensor = "x"}, uint64_t(k));
        std::vector<BlockQ8_0> xq(static_cast<size_t>(bpr));
        ref::quantize_q8_0(reinterpret_cast<const float*>(xbytes.data()), xq.data(), k);
        RowCheck a, b;
        std::thread other(check_rows, bpr, std::cref(xq), uint64_t(k) * 2 + 1, int64_t(80000), std::ref(b));
        check_rows(bpr, xq, uint64_t(k) * 2, 80000, a);
        other.join();
        EXPECT_EQ(a.rows + b.rows, 160000) << "k " << k;
        EXPECT_EQ(a.claim_diffs + b.claim_diffs, 0) << "k " << k << ": v2's width changed bytes";
        EXPECT_EQ(a.out_of_bound + b.out_of_bound, 0) << "k " << k << ": rows outside the rounding bound";
    }
}

// ------------------------------------------------------------------------------------------
// Device: the launchers against the model, byte for byte (the engine's guarded A/B/C runs come
// from `bitgate check --device`; these call the launchers directly, every path forced).

#if defined(BITGATE_HAVE_CUDA)

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr << ": " << cudaGetErrorString(cudaGetLastError())

template <class T>
struct DeviceBuffer {
    T* p = nullptr;
    size_t bytes = 0;
    explicit DeviceBuffer(size_t count, size_t slack = 0) : bytes(count * sizeof(T) + slack) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
    }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Case {
    int64_t n, k, g;
};

// Inputs from the family's own generators, expected bytes from the model.
struct Inputs {
    std::vector<uint8_t> x, w;
    std::vector<float> y;
    Inputs(const Case& c, const char* profile) : x(size_t(c.k) * 4), w(size_t(c.g * c.n * (c.k / 32)) * sizeof(BlockQ8_0)), y(size_t(c.g * c.n)) {
        inputs::fill_f32(x, GenRequest{.seed = 11, .profile = profile, .tensor = "x"}, uint64_t(c.k));
        inputs::fill_q8_0(w, GenRequest{.seed = 11, .profile = profile, .tensor = "w"});
        ref::proj_q8_0_group(reinterpret_cast<const float*>(x.data()), reinterpret_cast<const BlockQ8_0*>(w.data()), y.data(),
                             c.n, c.k, c.g, {.width = proj_q8_0_v2_width(c.k / 32)});
    }
};

const Case kDeviceCases[] = {
    {1, 32, 1},     {5, 1024, 1},  {7, 1056, 4},    {1023, 1056, 1}, {1024, 2048, 1}, {1025, 2080, 1},
    {1027, 4352, 1}, {96, 7168, 1}, {1025, 896, 4},  {2049, 14336, 1}, {33, 18944, 4},  {1026, 256, 4},
    {1025, 3584, 2}, {37, 896, 2},
};

TEST(ProjQ8Device, EveryPathMatchesTheModel) {
    BITGATE_REQUIRE_GPU();
    for (const Case& c : kDeviceCases) {
        for (const char* profile : {"uniform", "raw_q8", "zeros"}) {
            SCOPED_TRACE(testing::Message() << "n=" << c.n << " k=" << c.k << " g=" << c.g << " " << profile);
            const Inputs in(c, profile);
            const int64_t bpr = c.k / 32, mat = c.n * bpr;
            // w at offset 0 (256-aligned: staged allowed) and at offset 2 (only 2-aligned: direct).
            for (size_t shift : {size_t(0), size_t(2)}) {
                DeviceBuffer<uint8_t> w(in.w.size(), 16);
                DeviceBuffer<float> x{size_t(c.k)}, y{size_t(c.g * c.n)};
                DeviceBuffer<BlockQ8_0> xq{size_t(bpr)}, scratch{size_t(bpr)};
                ASSERT_TRUE(w.p && x.p && y.p && xq.p && scratch.p);
                const auto* wd = reinterpret_cast<const BlockQ8_0*>(w.p + shift);
                CUDA_OK(cudaMemcpy(w.p + shift, in.w.data(), in.w.size(), cudaMemcpyHostToDevice));
                CUDA_OK(cudaMemcpy(x.p, in.x.data(), in.x.size(), cudaMemcpyHostToDevice));
                auto expect_y = [&](const char* what) {
                    std::vector<float> got(static_cast<size_t>(c.g * c.n));
                    CUDA_OK(cudaDeviceSynchronize());
                    CUDA_OK(cudaMemcpy(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost));
                    EXPECT_TRUE(same_bytes(got, in.y)) << what << " (w offset " << shift << ")";
                    CUDA_OK(cudaMemset(y.p, 0xff, got.size() * 4));
                };
                CUDA_OK(cudaMemset(y.p, 0xff, size_t(c.g * c.n) * 4));
                cuda::proj_q8_0_per_call_v1(x.p, wd, y.p, c.n, c.k, c.g, scratch.p, nullptr);
                expect_y("per-call v1");
                cuda::proj_q8_0_per_call_v2(x.p, wd, y.p, c.n, c.k, c.g, scratch.p, nullptr);
                expect_y("per-call v2");
                cuda::proj_q8_0_hoisted(x.p, wd, y.p, c.n, c.k, c.g, xq.p, nullptr);
                expect_y("hoisted");
                for (auto path : {cuda::ProjQ8Path::direct, cuda::ProjQ8Path::staged}) {
                    for (int64_t m = 0; m < c.g; ++m) cuda::proj_q8_0_v2(wd + m * mat, xq.p, y.p + m * c.n, c.n, c.k, nullptr, path);
                    expect_y(path == cuda::ProjQ8Path::direct ? "v2 direct" : "v2 staged (direct where not allowed)");
                }
                CUDA_OK(cudaMemset(xq.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));
                cuda::proj_q8_0_hoist(x.p, xq.p, c.k, nullptr);
                cuda::proj_q8_0_project_hoisted(xq.p, wd, y.p, c.n, c.k, c.g, nullptr);
                expect_y("hoist, then project");
                if (c.g == 4) {
                    cuda::proj_q8_0_hoisted_fused4(x.p, wd, y.p, c.n, c.k, xq.p, nullptr);
                    expect_y("hoisted fused4");
                    cuda::proj_q8_0_project_fused4(xq.p, wd, y.p, c.n, c.k, nullptr);
                    expect_y("hoist, then fused4 project");
                    const BlockQ8_0* ws[4] = {wd, wd + mat, wd + 2 * mat, wd + 3 * mat};
                    float* ys[4] = {y.p, y.p + c.n, y.p + 2 * c.n, y.p + 3 * c.n};
                    cuda::proj_q8_0_fused4(ws, xq.p, ys, c.n, c.k, nullptr, cuda::ProjQ8Path::direct);
                    expect_y("fused4 direct");
                }
                if (c.g == 2) {
                    cuda::proj_q8_0_project_fused2(xq.p, wd, y.p, c.n, c.k, nullptr);
                    expect_y("hoist, then fused2 project");
                    const BlockQ8_0* ws[2] = {wd, wd + mat};
                    float* ys[2] = {y.p, y.p + c.n};
                    cuda::proj_q8_0_fused2(ws, xq.p, ys, c.n, c.k, nullptr, cuda::ProjQ8Path::direct);
                    expect_y("fused2 direct");
                }
            }
        }
    }
}

// The hoisted path writes only the caller's xq, the per-call path only its scratch; and the
// launch counts the benchmark reports.
TEST(ProjQ8Device, BuffersAndLaunchCounts) {
    BITGATE_REQUIRE_GPU();
    const Case c{1024, 7168, 4};
    const Inputs in(c, "uniform");
    const int64_t bpr = c.k / 32;
    DeviceBuffer<uint8_t> w(in.w.size());
    DeviceBuffer<float> x{size_t(c.k)}, y{size_t(c.g * c.n)};
    DeviceBuffer<BlockQ8_0> xq{size_t(bpr)}, scratch{size_t(bpr)};
    ASSERT_TRUE(w.p && x.p && y.p && xq.p && scratch.p);
    const auto* wd = reinterpret_cast<const BlockQ8_0*>(w.p);
    CUDA_OK(cudaMemcpy(w.p, in.w.data(), in.w.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(x.p, in.x.data(), in.x.size(), cudaMemcpyHostToDevice));
    auto untouched = [&](BlockQ8_0* p) {
        std::vector<uint8_t> h(size_t(bpr) * sizeof(BlockQ8_0));
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(h.data(), p, h.size(), cudaMemcpyDeviceToHost));
        EXPECT_TRUE(std::all_of(h.begin(), h.end(), [](uint8_t b) { return b == 0xa5; }));
        CUDA_OK(cudaMemset(p, 0xa5, h.size()));
    };
    CUDA_OK(cudaMemset(xq.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));
    CUDA_OK(cudaMemset(scratch.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));
    EXPECT_EQ(cuda::proj_q8_0_hoisted(x.p, wd, y.p, c.n, c.k, 4, xq.p, nullptr), 5);
    untouched(scratch.p);
    EXPECT_EQ(cuda::proj_q8_0_hoisted_fused4(x.p, wd, y.p, c.n, c.k, xq.p, nullptr), 2);
    untouched(scratch.p);
    CUDA_OK(cudaMemset(xq.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));  // the hoisted calls wrote it, as they should
    EXPECT_EQ(cuda::proj_q8_0_per_call_v2(x.p, wd, y.p, c.n, c.k, 4, scratch.p, nullptr), 8);
    untouched(xq.p);
    EXPECT_EQ(cuda::proj_q8_0_per_call_v1(x.p, wd, y.p, c.n, c.k, 1, scratch.p, nullptr), 2);
    untouched(xq.p);
    EXPECT_EQ(cuda::proj_q8_0_hoisted(x.p, wd, y.p, c.n, c.k, 1, xq.p, nullptr), 2);
    // The engine's split: the hoist is the preparation (1 launch), then the 96x7168 projection
    // costs one launch and a hoisted fused4 group one launch; neither touches xq or scratch.
    CUDA_OK(cudaMemset(xq.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));
    CUDA_OK(cudaMemset(scratch.p, 0xa5, size_t(bpr) * sizeof(BlockQ8_0)));  // the per-call paths wrote it, as they should
    EXPECT_EQ(cuda::proj_q8_0_hoist(x.p, xq.p, c.k, nullptr), 1);
    untouched(scratch.p);
    std::vector<uint8_t> hoisted(size_t(bpr) * sizeof(BlockQ8_0));
    CUDA_OK(cudaMemcpy(hoisted.data(), xq.p, hoisted.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ(cuda::proj_q8_0_project_hoisted(xq.p, wd, y.p, 96, c.k, 1, nullptr), 1);
    EXPECT_EQ(cuda::proj_q8_0_project_hoisted(xq.p, wd, y.p, c.n, c.k, 4, nullptr), 4);
    EXPECT_EQ(cuda::proj_q8_0_project_fused4(xq.p, wd, y.p, c.n, c.k, nullptr), 1);
    std::vector<uint8_t> after(hoisted.size());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(after.data(), xq.p, after.size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(after == hoisted) << "a projection wrote the hoisted activation";
    untouched(scratch.p);
    CUDA_OK(cudaGetLastError());
}

// The projections are launched as dependents (kernels/pdl.cuh): they may start while the
// quantize before them runs, and must wait for it before reading xq. Two activations take turns
// through one xq, quantize then project with nothing between them, on a stream of the test's own
// and replayed from a CUDA graph: every projection must give the bytes of the activation just
// quantized, never of the one before.
TEST(ProjQ8Device, DependentLaunchWaitsForTheQuantize) {
    BITGATE_REQUIRE_GPU();
    const Case c{1024, 7168, 4};
    const Inputs in(c, "uniform");
    std::vector<uint8_t> x2(in.x.size());
    inputs::fill_f32(x2, GenRequest{.seed = 12, .profile = "outliers", .tensor = "x"}, uint64_t(c.k));
    std::vector<float> y2(in.y.size());
    ref::proj_q8_0_group(reinterpret_cast<const float*>(x2.data()), reinterpret_cast<const BlockQ8_0*>(in.w.data()), y2.data(), c.n,
                         c.k, c.g, {.width = proj_q8_0_v2_width(c.k / 32)});
    ASSERT_FALSE(same_bytes(in.y, y2));
    constexpr int kRounds = 16;
    const size_t ys = size_t(c.g * c.n);
    DeviceBuffer<uint8_t> w(in.w.size());
    DeviceBuffer<float> x{2 * size_t(c.k)}, y{kRounds * ys};
    DeviceBuffer<BlockQ8_0> xq{size_t(c.k / 32)};
    ASSERT_TRUE(w.p && x.p && y.p && xq.p);
    const auto* wd = reinterpret_cast<const BlockQ8_0*>(w.p);
    CUDA_OK(cudaMemcpy(w.p, in.w.data(), in.w.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(x.p, in.x.data(), in.x.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(x.p + c.k, x2.data(), x2.size(), cudaMemcpyHostToDevice));
    cudaStream_t s = nullptr;
    CUDA_OK(cudaStreamCreate(&s));
    for (bool fused : {false, true}) {
        for (bool graph : {false, true}) {
            SCOPED_TRACE(testing::Message() << (fused ? "hoisted fused4" : "hoisted") << (graph ? ", graph replay" : ", stream"));
            CUDA_OK(cudaMemset(y.p, 0xff, kRounds * ys * 4));
            auto rounds = [&] {
                for (int r = 0; r < kRounds; ++r) {
                    const float* xr = x.p + (r % 2) * c.k;
                    if (fused)
                        cuda::proj_q8_0_hoisted_fused4(xr, wd, y.p + r * ys, c.n, c.k, xq.p, s);
                    else
                        cuda::proj_q8_0_hoisted(xr, wd, y.p + r * ys, c.n, c.k, c.g, xq.p, s);
                }
            };
            if (graph) {
                CUDA_OK(test::replay_in_graph(s, rounds, 3));
            } else {
                rounds();
            }
            CUDA_OK(cudaStreamSynchronize(s));
            std::vector<float> got(kRounds * ys);
            CUDA_OK(cudaMemcpy(got.data(), y.p, got.size() * 4, cudaMemcpyDeviceToHost));
            for (int r = 0; r < kRounds; ++r) {
                const std::vector<float> yr(got.begin() + r * ys, got.begin() + (r + 1) * ys);
                EXPECT_TRUE(same_bytes(yr, r % 2 ? y2 : in.y)) << "round " << r;
            }
        }
    }
    CUDA_OK(cudaStreamDestroy(s));
    CUDA_OK(cudaGetLastError());
}

#else

TEST(ProjQ8Device, DependentLaunchWaitsForTheQuantize) { BITGATE_REQUIRE_GPU(); }
TEST(ProjQ8Device, EveryPathMatchesTheModel) { BITGATE_REQUIRE_GPU(); }
TEST(ProjQ8Device, BuffersAndLaunchCounts) { BITGATE_REQUIRE_GPU(); }

#endif

}  // namespace
