// attention: the host model against values known without it (one key gives v exactly, a
// dominating key gives its v exactly, zero queries give the exact mean of v), against a plain
// softmax in double within the bound docs/attention.md states, and exact invariances (prefill
// row i equals decode at L = i + 1, grouped heads equal duplicated kv heads, the cache beyond L
// is never read).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "attention.hpp"
#include "bitgate/attention_order.hpp"
#include "bitgate/exp.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "registry.hpp"
#include "gpu.hpp"
#include "host_run.hpp"

using namespace bitgate;

#if defined(BITGATE_HAVE_CUDA)
namespace bitgate::test {
// tests/attention_device.cu: cuda::attention_f16kv on output bytes poisoned with `poison`.
std::string attention_device(const std::vector<float>& q, const std::vector<uint16_t>& k,
                             const std::vector<uint16_t>& v, int64_t n_q, int64_t L, int64_t ctx, int64_t n_head,
                             int64_t n_kv_head, int64_t head_dim, uint8_t poison, std::vector<float>& out);
}  // namespace bitgate::test
#endif

namespace {

// The caches as the family generates them (specs/attention.cpp).
void fill_kv_cache(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    for (const TensorSpec& t : family("attention").tensors)
        if (t.name == r.tensor) return t.generate(s, r, out);
    FAIL() << "attention has no tensor " << r.tensor;
}

struct Case {
    int64_t n_q, L, ctx, n_head, n_kv_head, D;
    std::vector<float> q;
    std::vector<uint16_t> k, v;

    Shape shape() const {
        return Shape{{"n_q", "L", "ctx", "n_head", "n_kv_head", "head_dim"}, {n_q, L, ctx, n_head, n_kv_head, D}};
    }
    size_t at(int64_t kvh, int64_t pos, int64_t d) const { return size_t((kvh * ctx + pos) * D + d); }
    std::vector<float> run() const {
        std::vector<float> out(size_t(n_q * n_head * D), -7.0f);
        ref::attention_f16kv(q.data(), k.data(), v.data(), n_q, L, ctx, n_head, n_kv_head, D, out.data());
        return out;
    }
};

// Generated as the family generates them: q by profile, caches f16(2u) with NaN beyond L.
Case generated(int64_t n_q, int64_t L, int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t D,
               const char* profile = "uniform", uint64_t seed = 3) {
    Case c{n_q, L, ctx, n_head, n_kv_head, D, std::vector<float>(size_t(n_q * n_head * D)),
           std::vector<uint16_t>(size_t(n_kv_head * ctx * D)), std::vector<uint16_t>(size_t(n_kv_head * ctx * D))};
    const Shape s = c.shape();
    inputs::fill_f32({reinterpret_cast<uint8_t*>(c.q.data()), c.q.size() * 4},
                     GenRequest{.seed = seed, .profile = profile, .tensor = "q"}, uint64_t(D));
    fill_kv_cache(s, GenRequest{.seed = seed, .profile = profile, .tensor = "k_cache"},
                       {reinterpret_cast<uint8_t*>(c.k.data()), c.k.size() * 2});
    fill_kv_cache(s, GenRequest{.seed = seed, .profile = profile, .tensor = "v_cache"},
                       {reinterpret_cast<uint8_t*>(c.v.data()), c.v.size() * 2});
    return c;
}

// Plain softmax attention in double: every score, exp in libm, one sum, one division.
std::vector<double> reference(const Case& c) {
    const int64_t G = c.n_head / c.n_kv_head, D = c.D;
    std::vector<double> out(static_cast<size_t>(c.n_q * c.n_head * D));
    for (int64_t i = 0; i < c.n_q; ++i)
        for (int64_t h = 0; h < c.n_head; ++h) {
            const int64_t kvh = h / G, n = c.L - c.n_q + i + 1;
            std::vector<double> s(static_cast<size_t>(n));
            double m = -INFINITY;
            for (int64_t j = 0; j < n; ++j) {
                double dot = 0;
                for (int64_t d = 0; d < D; ++d)
                    dot += double(c.q[size_t((i * c.n_head + h) * D + d)]) * double(f16_to_f32(c.k[c.at(kvh, j, d)]));
                s[size_t(j)] = dot / std::sqrt(double(D));
                m = std::max(m, s[size_t(j)]);
            }
            double l = 0;
            for (double& x : s) l += (x = std::exp(x - m));
            for (int64_t d = 0; d < D; ++d) {
                double a = 0;
                for (int64_t j = 0; j < n; ++j) a += s[size_t(j)] * double(f16_to_f32(c.v[c.at(kvh, j, d)]));
                out[size_t((i * c.n_head + h) * D + d)] = a / l;
            }
        }
    return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

}  // namespace

TEST(Attention, ExpOfZeroIsOne) {
    // The single-key and equal-score cases below rest on it.
    EXPECT_EQ(f32_bits(exp_det(0.0f)), f32_bits(1.0f));
    EXPECT_EQ(f32_bits(exp_det(-0.0f)), f32_bits(1.0f));
    EXPECT_EQ(f32_bits(exp_det(-200.0f)), 0u);
    EXPECT_EQ(f32_bits(exp_det(-INFINITY)), 0u);
}

TEST(Attention, ScaleIsTheRoundedInverseSquareRoot) {
    EXPECT_EQ(attention_scale(64), 0.125f);
    EXPECT_EQ(attention_scale(128), float(1.0 / std::sqrt(128.0)));  // both roundings land on the nearest float
}

TEST(Attention, OneKeyGivesVExactly) {
    // softmax over one key is exp_det(0) / exp_det(0) = 1: out = fma(1, v, 0) / 1 = v.
    for (int64_t D : {64, 128}) {
        const Case c = generated(1, 1, 5, 4, 2, D, "outliers");
        const auto out = c.run();
        for (int64_t h = 0; h < 4; ++h)
            for (int64_t d = 0; d < D; ++d)
                ASSERT_EQ(f32_bits(out[size_t(h * D + d)]), f32_bits(f16_to_f32(c.v[c.at(h / 2, 0, d)])))
                    << "D " << D << " head " << h << " dim " << d;
    }
}

TEST(Attention, ZeroQueriesGiveTheExactMean) {
    // q = 0: every score is 0, every p is 1, every split max 0 and every fold weight 1. With v a
    // multiple of 2^-6 in [-2, 2] every partial sum (at most 2^17 in size) is exact in f32, so out
    // is the exact sum (a float) over the keys a query sees divided once by their count, and the
    // split sizes do not matter: a check of which keys each query sums, independent of the order.
    for (auto [n_q, L] : {std::pair<int64_t, int64_t>{1, 1000}, {1, 4096}, {70, 70}, {3, 600}}) {
        Case c = generated(n_q, L, L + 3, 2, 1, 64);
        std::fill(c.q.begin(), c.q.end(), 0.0f);
        const inputs::Stream st(GenRequest{.seed = 5, .profile = "uniform", .tensor = "mean"});
        for (int64_t j = 0; j < L; ++j)
            for (int64_t d = 0; d < 64; ++d)
                c.v[c.at(0, j, d)] = f32_to_f16_rn(float(int(st.bits(uint64_t(j * 64 + d)) % 257) - 128) * 0x1p-6f);
        const auto out = c.run();
        for (int64_t i = 0; i < n_q; ++i) {
            const int64_t n = L - n_q + i + 1;
            for (int64_t d = 0; d < 64; ++d) {
                double sum = 0;
                for (int64_t j = 0; j < n; ++j) sum += double(f16_to_f32(c.v[c.at(0, j, d)]));
                for (int64_t h = 0; h < 2; ++h)
                    ASSERT_EQ(f32_bits(out[size_t((i * 2 + h) * 64 + d)]), f32_bits(float(sum) / float(n)))
                        << "n_q " << n_q << " L " << L << " query " << i << " dim " << d;
            }
        }
    }
}

TEST(Attention, ADominatingKeyGivesItsVExactly) {
    // Every query is 1e6 along axis 0; the key at query i's position has 1 + i/64 there, every
    // other key 0. Scores are 125000 * k: each later query key beats the one before by more than
    // 104, so p is exactly 1 for the best key a query sees and exactly 0 for every other (other
    // splits fold in with exp_det(<= -104) = 0). Causal: query i sees its own key as the best;
    // a query that saw the keys after it would pick the last one.
    for (int64_t D : {64, 128}) {
        const int64_t L = 600, n_q = 60;
        Case c = generated(n_q, L, L, 1, 1, D);
        std::fill(c.k.begin(), c.k.end(), uint16_t(0));
        for (int64_t i = 0; i < n_q; ++i) {
            c.k[c.at(0, L - n_q + i, 0)] = f32_to_f16_rn(1.0f + float(i) / 64.0f);
            for (int64_t d = 0; d < D; ++d) c.q[size_t(i * D + d)] = d == 0 ? 1e6f : 0.0f;
        }
        const auto out = c.run();
        for (int64_t i = 0; i < n_q; ++i)
            for (int64_t d = 0; d < D; ++d)
                ASSERT_EQ(f32_bits(out[size_t(i * D + d)]), f32_bits(f16_to_f32(c.v[c.at(0, L - n_q + i, d)])))
                    << "D " << D << " query " << i << " dim " << d;
    }
}

TEST(Attention, CloseToDoubleSoftmax) {
    // The bound of docs/attention.md: |out - exact| <= 2^-18 * max |v| (max |v| = 2 here) for
    // these generated inputs; the measured worst case is printed for the doc.
    struct S { int64_t n_q, L, n_head, n_kv_head, D; const char* profile; };
    double worst = 0;
    for (const S& s : {S{1, 1000, 14, 2, 64, "uniform"}, S{1, 4096, 4, 1, 128, "outliers"},
                       S{65, 65, 14, 2, 64, "normal"}, S{17, 300, 4, 2, 128, "outliers"},
                       S{1, 2000, 2, 2, 128, "normal"}, S{1, 32768, 4, 1, 128, "outliers"},
                       S{512, 512, 2, 1, 64, "outliers"}, S{1, 32768, 2, 1, 64, "zeros"}}) {
        const Case c = generated(s.n_q, s.L, s.L + 1, s.n_head, s.n_kv_head, s.D, s.profile);
        const auto out = c.run();
        const auto want = reference(c);
        for (size_t e = 0; e < out.size(); ++e) {
            const double err = std::fabs(double(out[e]) - want[e]);
            worst = std::max(worst, err);
            ASSERT_LE(err, 2.0 * 0x1p-18) << s.profile << " L " << s.L << " element " << e << " got " << out[e]
                                          << " want " << want[e];
        }
    }
    std::printf("attention: worst |out - double| = %.3g (bound %.3g)\n", worst, 2.0 * 0x1p-18);
}

TEST(Attention, PrefillRowEqualsDecodeAtItsLength) {
    // The order depends on key positions only: query i of a prefill over L keys is the decode
    // of one query over L' = i + 1 keys, bit for bit (split edges at 128, 256, 512 included).
    for (int64_t D : {64, 128}) {
        const int64_t L = 520, H = 4, KV = 2;
        const Case p = generated(L, L, L + 8, H, KV, D, "normal");
        const auto full = p.run();
        for (int64_t i : {0, 1, 63, 127, 128, 129, 255, 256, 511, 512, 519}) {
            Case d = p;
            d.n_q = 1;
            d.L = i + 1;
            d.q.assign(p.q.begin() + i * H * D, p.q.begin() + (i + 1) * H * D);
            const auto one = d.run();
            ASSERT_EQ(std::memcmp(one.data(), full.data() + i * H * D, one.size() * 4), 0) << "D " << D << " query " << i;
        }
    }
}

TEST(Attention, GroupedHeadsEqualDuplicatedKvHeads) {
    // Head h reads kv head h / G: giving every head its own copy of that kv head changes no bit.
    const int64_t n_q = 20, L = 300, ctx = 310, H = 14, KV = 2, D = 64, G = H / KV;
    const Case g = generated(n_q, L, ctx, H, KV, D, "outliers");
    Case u = g;
    u.n_kv_head = H;
    u.k.assign(size_t(H * ctx * D), 0);
    u.v.assign(size_t(H * ctx * D), 0);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t p = 0; p < ctx; ++p)
            for (int64_t d = 0; d < D; ++d) {
                u.k[u.at(h, p, d)] = g.k[g.at(h / G, p, d)];
                u.v[u.at(h, p, d)] = g.v[g.at(h / G, p, d)];
            }
    EXPECT_TRUE(same_bits(g.run(), u.run()));
}

TEST(Attention, CacheBeyondLIsNeverRead) {
    // The generated cache holds NaN beyond L: any read would make out NaN. Every output is
    // finite, and a larger ctx (more poison rows) changes no bit.
    const Case a = generated(17, 300, 300, 4, 2, 128, "uniform");
    const Case b = generated(17, 300, 333, 4, 2, 128, "uniform");
    EXPECT_EQ(b.k[b.at(0, 300, 0)], 0x7e00);
    Case b2 = b;  // b's valid rows are a's only if the generator is position-keyed: copy them
    for (int64_t kvh = 0; kvh < 2; ++kvh)
        for (int64_t p = 0; p < 300; ++p)
            for (int64_t d = 0; d < 128; ++d) {
                b2.k[b2.at(kvh, p, d)] = a.k[a.at(kvh, p, d)];
                b2.v[b2.at(kvh, p, d)] = a.v[a.at(kvh, p, d)];
            }
    const auto out = a.run();
    for (float x : out) ASSERT_TRUE(std::isfinite(x));
    EXPECT_TRUE(same_bits(out, b2.run()));
}

// The fast host path (K transposed, vectorized loops) is the scalar definition's operations in
// another layout: byte for byte over both head dims, prefill and decode, ragged split ends, GQA
// groups and every profile; with infinities and NaN in the inputs, byte for byte once NaNs are
// canonical, as the engine compares f32 outputs (which of two NaN operands x86 passes on depends
// on the operand order the compiler picks for an instruction, scalar or vector).
TEST(Attention, FastHostPathEqualsScalarPath) {
    struct S { int64_t n_q, L, ctx, H, KV, D; };
    const S shapes[] = {{1, 1, 4, 2, 1, 64},       {1, 129, 140, 14, 2, 64}, {1, 300, 300, 28, 4, 128},
                        {37, 37, 40, 4, 2, 128},   {70, 200, 210, 7, 1, 64}, {5, 33, 33, 8, 8, 128},
                        {130, 130, 131, 2, 1, 64}, {1, 1000, 1024, 7, 1, 128}};
    int compared = 0;
    for (const S& sh : shapes)
        for (const char* profile : {"uniform", "normal", "outliers", "zeros"}) {
            Case c = generated(sh.n_q, sh.L, sh.ctx, sh.H, sh.KV, sh.D, profile, 11);
            std::vector<float> fast(c.q.size(), -7.0f), plain(c.q.size(), -7.0f);
            auto both = [&] {
                ref::attention_f16kv(c.q.data(), c.k.data(), c.v.data(), c.n_q, c.L, c.ctx, c.n_head, c.n_kv_head,
                                     c.D, fast.data(), ref::HostPath::fastest);
                ref::attention_f16kv(c.q.data(), c.k.data(), c.v.data(), c.n_q, c.L, c.ctx, c.n_head, c.n_kv_head,
                                     c.D, plain.data(), ref::HostPath::scalar);
                ++compared;
            };
            both();
            ASSERT_TRUE(same_bits(fast, plain)) << profile << " n_q " << sh.n_q << " L " << sh.L << " D " << sh.D;
            // Non-finite inputs: an infinite key element, a NaN value element with a payload, an
            // infinite query element.
            c.k[c.at(0, sh.L / 2, 3)] = 0x7c00;
            c.v[c.at(0, sh.L - 1, 5)] = 0x7e55;
            c.q[size_t(sh.D + 1) % c.q.size()] = INFINITY;
            both();
            canonicalize_nans(fast);
            canonicalize_nans(plain);
            ASSERT_TRUE(same_bits(fast, plain)) << "non-finite, " << profile << " L " << sh.L;
        }
    EXPECT_EQ(compared, 64);
}

TEST(Attention, FoldWithEqualMaximaAddsExactly) {
    // Two splits with the same max: both weights are exp_det(0) = 1, so the fold is a plain
    // fma(Ls, 1, l * 1) = Ls + l, and A + acc.
    float M = 3.0f, Ls = 5.0f, A[2] = {1.5f, -2.0f};
    const float acc[2] = {0.25f, 4.0f};
    ref::attention_fold(M, Ls, A, 3.0f, 7.0f, acc, 2);
    EXPECT_EQ(M, 3.0f);
    EXPECT_EQ(Ls, 12.0f);
    EXPECT_EQ(A[0], 1.75f);
    EXPECT_EQ(A[1], 2.0f);
    // A split whose max is 200 below the running one contributes exactly nothing.
    ref::attention_fold(M, Ls, A, -197.0f, 9.0f, acc, 2);
    EXPECT_EQ(Ls, 12.0f);
    EXPECT_EQ(A[0], 1.75f);
}

TEST(AttentionDevice, ForwardEntryPointEqualsModel) {
    // The engine checks the registered prefill and decode launchers; this checks what the forward
    // pass calls, with its own workspace, on both poisons (a byte never written differs).
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    struct S { int64_t n_q, L, ctx, H, KV, D; };
    for (const S& s : {S{1, 1, 4, 14, 2, 64}, S{1, 1000, 1010, 14, 2, 64}, S{1, 32768, 32800, 28, 4, 128},
                       S{1, 33000, 33000, 8, 1, 64}, S{65, 65, 80, 28, 4, 128}, S{17, 300, 300, 4, 2, 64},
                       S{1, 300, 310, 65, 1, 64}}) {
        const Case c = generated(s.n_q, s.L, s.ctx, s.H, s.KV, s.D, "outliers");
        const auto want = c.run();
        for (uint8_t poison : {uint8_t(0xa5), uint8_t(0x5a)}) {
            std::vector<float> got;
            ASSERT_EQ(test::attention_device(c.q, c.k, c.v, s.n_q, s.L, s.ctx, s.H, s.KV, s.D, poison, got), "");
            EXPECT_TRUE(same_bits(got, want)) << "n_q " << s.n_q << " L " << s.L << " heads " << s.H << "/" << s.KV
                                              << " D " << s.D << " poison " << int(poison);
        }
    }
#endif
}
