// prefill_chain: rms_norm -> plane -> mmq_q8_0, fused norm against the unfused pair. The host
// claim (the two composed models give C byte for byte), the composed model against a chain
// computed independently in double, and both launch chains on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"
#include "bitgate/pad40.hpp"
#include "device.hpp"
#include "gpu.hpp"
#include "host_run.hpp"
#include "mmq_q8_0.hpp"
#include "prefill_chain.hpp"
#include "registry.hpp"
#include "rms_norm.hpp"

using namespace bitgate;

namespace {

struct Dims {
    int64_t n, K, N;
};

Shape shape_of(const Dims& d) { return Shape{{"n", "K", "N"}, {d.n, d.K, d.N}}; }

// The family's own inputs (x, norm_w, w), generated as every check generates them.
struct Inputs {
    std::vector<Bytes> bytes;
    const float* x() const { return reinterpret_cast<const float*>(bytes[0].data()); }
    const float* norm_w() const { return reinterpret_cast<const float*>(bytes[1].data()); }
    const BlockQ8_0* w() const { return reinterpret_cast<const BlockQ8_0*>(bytes[2].data()); }
};

Inputs inputs_of(const Dims& d, const char* profile, uint64_t seed = 3) {
    return Inputs{make_inputs(family("prefill_chain"), shape_of(d), seed, profile)};
}

// C and the intermediates of one chain, all poisoned with `poison` first.
struct ChainOut {
    std::vector<float> C, y;
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
};

ChainOut poisoned(const Dims& d, uint8_t poison) {
    ChainOut r{std::vector<float>(size_t(d.n * d.N)), std::vector<float>(size_t(d.n * d.K)),
          std::vector<uint8_t>(pad40_qs_bytes(d.n, d.K)), std::vector<uint32_t>(pad40_sda_bytes(d.n, d.K) / 4)};
    std::memset(r.C.data(), poison, r.C.size() * 4);
    std::memset(r.y.data(), poison, r.y.size() * 4);
    std::memset(r.qs.data(), poison, r.qs.size());
    std::memset(r.sda.data(), poison, r.sda.size() * 4);
    return r;
}

template <class Chain>
ChainOut chain_run(Chain chain, const Dims& d, const Inputs& in, uint8_t poison) {
    ChainOut r = poisoned(d, poison);
    chain(in.x(), in.norm_w(), in.w(), r.C.data(), ref::ChainWork{r.y.data(), r.qs.data(), r.sda.data()}, d.n, d.K,
          d.N);
    return r;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Every catalog-like edge: one token, token-block edges (63/64/65, 127/128/129), a single chunk,
// one output row, and N ragged against the 64- and 128-row tiles.
const Dims kShapes[] = {{1, 896, 896}, {63, 896, 128}, {64, 640, 96}, {65, 896, 65},
                        {129, 160, 200}, {127, 32, 1},  {128, 1056, 129}, {300, 3584, 7}};

}  // namespace

TEST(PrefillChain, FusedModelGivesTheUnfusedPairsBytes) {
    for (const Dims& d : kShapes)
        for (const char* p : {"uniform", "outliers", "zeros", "tiny", "signed_zero"}) {
            const Inputs in = inputs_of(d, p);
            const ChainOut f = chain_run(ref::prefill_chain_fused, d, in, 0xa5);
            const ChainOut u = chain_run(ref::prefill_chain_unfused, d, in, 0x5a);
            const std::string where = std::to_string(d.n) + " " + std::to_string(d.K) + " " + std::to_string(d.N) + " " + p;
            EXPECT_TRUE(same_bytes(f.C, u.C)) << "C " << where;
            EXPECT_TRUE(same_bytes(f.qs, u.qs)) << "qs " << where;
            EXPECT_TRUE(same_bytes(f.sda, u.sda)) << "sda " << where;
            EXPECT_TRUE(same_bytes(f.y, u.y)) << "y " << where;
        }
}

// The fused chain's plane is the fused norm's (not a quantize_pad40_t of y in disguise), and the
// chain writes every byte of y, the plane and C whatever the buffers held.
TEST(PrefillChain, FusedModelRunsTheFusedNormAndWritesEverything) {
    for (const Dims& d : kShapes) {
        const Inputs in = inputs_of(d, "normal");
        const ChainOut a = chain_run(ref::prefill_chain_fused, d, in, 0xa5);
        const ChainOut b = chain_run(ref::prefill_chain_fused, d, in, 0x5a);
        EXPECT_TRUE(same_bytes(a.C, b.C) && same_bytes(a.y, b.y) && same_bytes(a.qs, b.qs) && same_bytes(a.sda, b.sda))
            << "a byte depends on the poison: " << d.n << " " << d.K << " " << d.N;
        ChainOut norm = poisoned(d, 0);
        ref::rms_norm_quant_f32_t(in.x(), in.norm_w(), norm.y.data(), d.n, d.K, norm.qs.data(), norm.sda.data());
        EXPECT_TRUE(same_bytes(a.qs, norm.qs) && same_bytes(a.sda, norm.sda));
        ref::mmq_q8_0(norm.qs.data(), norm.sda.data(), in.w(), norm.C.data(), d.n, d.N, d.K, ref::MmqOrder::ascending,
                      ref::HostPath::scalar);
        EXPECT_TRUE(same_bytes(a.C, norm.C)) << "the chain's GEMM is not mmq_q8_0's scalar definition";
    }
}

// The registered variants are these chains: fused and unfused in one claim, C the only output.
TEST(PrefillChain, SpecDeclaresOneClaimAndComparesOnlyC) {
    const FamilySpec& f = family("prefill_chain");
    const auto vs = real_variants(f);
    ASSERT_EQ(vs.size(), 2u);
    EXPECT_EQ(vs[0]->claim, "prefill_chain");
    EXPECT_EQ(vs[1]->claim, "prefill_chain");
    EXPECT_EQ(tensors_of(f, Role::output).size(), 1u);
    EXPECT_EQ(tensors_of(f, Role::workspace).size(), 3u);
    const Dims d{65, 896, 129};
    const auto in = make_inputs(f, shape_of(d), 1, "uniform");
    const ModelRun fused = bitgate::run_model(f, variant(f, "fused"), shape_of(d), in, true);
    const ModelRun unfused = bitgate::run_model(f, variant(f, "unfused"), shape_of(d), in, true);
    ASSERT_EQ(fused.verdict, Verdict::ok);
    ASSERT_EQ(unfused.verdict, Verdict::ok);
    EXPECT_EQ(fused.out, unfused.out);
}

// Sanity: the composed model against x -> rms norm -> projection in double, with no quantization
// of the activation. Per element the bound is the worst case of what the plane may lose: per
// channel k of chunk c, |w_k| * (d_c / 2 (rounding to the grid) + (|y_k| + d_c) * 2^-10 (d_c
// stored as f16)), d_c = max |y| / 127 over the chunk, plus 1e-5 of sum |w_k y_k| for the float
// norm and the float accumulation. Its typical size is checked too: rounding to the grid leaves
// an error uniform in +-d_c/2 per channel, so the rms error over all of C must be within 25% of
// sqrt(sum_k w_k^2 d_c^2 / 12); a wrong row, token or scale would be far above it, a chain that
// skipped the quantization far below.
TEST(PrefillChain, ModelTracksADoublePrecisionChain) {
    for (const Dims& d : {Dims{1, 896, 896}, Dims{65, 896, 200}, Dims{129, 3584, 64}})
        for (const char* p : {"uniform", "normal", "outliers"}) {
            const Inputs in = inputs_of(d, p, 11);
            const ChainOut m = chain_run(ref::prefill_chain_fused, d, in, 0);
            double err2 = 0, noise2 = 0;
            int64_t outside = 0;
            std::vector<double> y(size_t(d.K)), dc(size_t(d.K / 32));
            for (int64_t t = 0; t < d.n; ++t) {
                const float* xr = in.x() + t * d.K;
                double ss = 0;
                for (int64_t k = 0; k < d.K; ++k) ss += double(xr[k]) * double(xr[k]);
                const double scale = 1.0 / std::sqrt(ss / double(d.K) + 1e-6);
                for (int64_t k = 0; k < d.K; ++k) y[size_t(k)] = double(xr[k]) * scale * double(in.norm_w()[k]);
                for (int64_t c = 0; c < d.K / 32; ++c) {
                    double am = 0;
                    for (int j = 0; j < 32; ++j) am = std::fmax(am, std::fabs(y[size_t(c * 32 + j)]));
                    dc[size_t(c)] = am / 127.0;
                }
                for (int64_t r = 0; r < d.N; ++r) {
                    double exact = 0, bound = 0, mag = 0, noise = 0;
                    for (int64_t k = 0; k < d.K; ++k) {
                        const BlockQ8_0& b = in.w()[r * (d.K / 32) + k / 32];
                        const double wk = double(f16_to_f32(b.d)) * double(b.qs[k % 32]);
                        const double dk = dc[size_t(k / 32)];
                        exact += wk * y[size_t(k)];
                        mag += std::fabs(wk * y[size_t(k)]);
                        bound += std::fabs(wk) * (0.5 * dk + (std::fabs(y[size_t(k)]) + dk) * 0x1p-10);
                        noise += wk * wk * dk * dk / 12.0;
                    }
                    bound += 1e-5 * mag;
                    const double got = double(m.C[size_t(t * d.N + r)]);
                    if (!(std::fabs(got - exact) <= bound)) ++outside;
                    err2 += (got - exact) * (got - exact);
                    noise2 += noise;
                }
            }
            const std::string where = std::to_string(d.n) + " " + std::to_string(d.K) + " " + std::to_string(d.N) + " " + p;
            EXPECT_EQ(outside, 0) << where;
            ASSERT_GT(noise2, 0.0) << where;
            const double ratio = std::sqrt(err2 / noise2);
            EXPECT_LT(ratio, 1.25) << where;
            EXPECT_GT(ratio, 0.75) << where << ": less error than rounding to the grid leaves";
        }
}

// ---- device -------------------------------------------------------------------------------------

namespace {

struct DeviceChain {
    std::vector<Bytes> out, work;  // C; y, qs, sda
    std::string error;
    int launches = 0;
};

// One launch chain through the family's registered launcher, outputs and workspaces poisoned.
DeviceChain run_device_chain(const std::string& variant, const Dims& d, const std::vector<Bytes>& in, uint8_t poison) {
    const FamilySpec& f = family("prefill_chain");
    const Shape s = shape_of(d);
    std::vector<DeviceBuffer> bi, bo, bw;
    DeviceIo io{.family = &f};
    for (const Bytes& b : in) {
        bi.emplace_back(b.size());
        bi.back().fill(0);  // sets the guard zones; the data is overwritten next
        bi.back().upload(b);
        io.in.push_back(bi.back().data());
    }
    for (size_t n : tensor_bytes(f, s, Role::output)) {
        bo.emplace_back(n);
        bo.back().fill(poison);
        io.out.push_back(bo.back().data());
    }
    for (size_t n : tensor_bytes(f, s, Role::workspace)) {
        bw.emplace_back(n);
        bw.back().fill(poison);
        io.work.push_back(bw.back().data());
    }
    DeviceChain r;
    r.launches = bitgate::variant(f, variant).launch(s, io);
    if (r.error = device_sync(); !r.error.empty()) return r;
    for (auto& b : bo) r.out.push_back(b.download());
    for (auto& b : bw) r.work.push_back(b.download());
    for (auto* group : {&bi, &bo, &bw})
        for (auto& b : *group)
            if (!b.guards_intact()) r.error = "a guard zone was overwritten";
    return r;
}

}  // namespace

TEST(PrefillChainDevice, FusedAndUnfusedLaunchChainsGiveTheSameBytes) {
    BITGATE_REQUIRE_GPU();
    const FamilySpec& f = family("prefill_chain");
    ASSERT_TRUE(bitgate::variant(f, "fused").launch && bitgate::variant(f, "unfused").launch) << "launchers not registered";
    for (const Dims& d : {Dims{1, 896, 896}, Dims{63, 896, 128}, Dims{64, 640, 96}, Dims{65, 896, 896},
                          Dims{129, 896, 200}, Dims{300, 3584, 512}, Dims{512, 3584, 3584}, Dims{3325, 3584, 512}})
        for (const char* p : {"uniform", "outliers", "tiny"}) {
            const std::string where = std::to_string(d.n) + " " + std::to_string(d.K) + " " + std::to_string(d.N) + " " + p;
            const auto in = make_inputs(f, shape_of(d), 7, p);
            const DeviceChain fu = run_device_chain("fused", d, in, kPoisonA);
            const DeviceChain un = run_device_chain("unfused", d, in, kPoisonB);
            ASSERT_EQ(fu.error, "") << where;
            ASSERT_EQ(un.error, "") << where;
            EXPECT_EQ(fu.launches, 2);
            EXPECT_EQ(un.launches, 3);
            EXPECT_TRUE(fu.out[0] == un.out[0]) << "C differs between the chains: " << where;
            EXPECT_TRUE(fu.work[0] == un.work[0]) << "y differs: " << where;
            EXPECT_TRUE(fu.work[1] == un.work[1]) << "qs differs: " << where;
            EXPECT_TRUE(fu.work[2] == un.work[2]) << "sda differs: " << where;
            // And the device chain is the host model's chain.
            const ModelRun m = bitgate::run_model(f, variant(f, "fused"), shape_of(d), in, false);
            ASSERT_EQ(m.verdict, Verdict::ok) << where;
            EXPECT_TRUE(fu.out[0] == m.out[0]) << "device C differs from the model: " << where;
        }
}
