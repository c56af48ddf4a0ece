// The attention kernels' own source, run on the CPU under tests/cuda_sim.hpp, against the host
// model byte for byte: prefill and decode (split and combine launches), split edges, chunked
// prefill, grouped heads, both head dims, and each defect the mutants switch on. This is the
// host-side check of the kernels' indexing and order; the device check is `bitgate check --device`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention.hpp"
#include "bitgate/attention_order.hpp"
#include "bitgate/exp.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "registry.hpp"
#include "cuda_sim.hpp"

namespace bitgate::cuda::attn_sim {
using namespace bitgate::cuda::sim;
}
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no such warning (and would warn about the name)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // key rows are loaded and used under the same t < nk
#endif
#define attn attn_sim  // the kernels land in bitgate::cuda::attn_sim: no symbol shared with the CUDA build
#include "../kernels/attention_kernels.cuh"
#undef attn
#pragma GCC diagnostic pop

using namespace bitgate;
namespace k = bitgate::cuda::attn_sim;

namespace {

// The caches as the family generates them (specs/attention.cpp).
void fill_kv_cache(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    for (const TensorSpec& t : family("attention").tensors)
        if (t.name == r.tensor) return t.generate(s, r, out);
    FAIL() << "attention has no tensor " << r.tensor;
}

struct Inputs {
    int64_t n_q, L, ctx, H, KV, D;
    std::vector<float> q;
    std::vector<uint16_t> kc, vc;
};

Inputs make(int64_t n_q, int64_t L, int64_t ctx, int64_t H, int64_t KV, int64_t D, const char* profile) {
    Inputs in{n_q, L, ctx, H, KV, D, std::vector<float>(size_t(n_q * H * D)), std::vector<uint16_t>(size_t(KV * ctx * D)),
              std::vector<uint16_t>(size_t(KV * ctx * D))};
    const Shape s{{"n_q", "L", "ctx", "n_head", "n_kv_head", "head_dim"}, {n_q, L, ctx, H, KV, D}};
    inputs::fill_f32({reinterpret_cast<uint8_t*>(in.q.data()), in.q.size() * 4},
                     GenRequest{.seed = 2, .profile = profile, .tensor = "q"}, uint64_t(D));
    fill_kv_cache(s, GenRequest{.seed = 2, .profile = profile, .tensor = "k_cache"},
                       {reinterpret_cast<uint8_t*>(in.kc.data()), in.kc.size() * 2});
    fill_kv_cache(s, GenRequest{.seed = 2, .profile = profile, .tensor = "v_cache"},
                       {reinterpret_cast<uint8_t*>(in.vc.data()), in.vc.size() * 2});
    return in;
}

std::vector<float> model(const Inputs& in) {
    std::vector<float> out(in.q.size());
    ref::attention_f16kv(in.q.data(), in.kc.data(), in.vc.data(), in.n_q, in.L, in.ctx, in.H, in.KV, in.D, out.data());
    return out;
}

constexpr float kPoison = -12345.0f;

template <int D, k::Bug B = k::Bug::none>
std::vector<float> prefill(const Inputs& in) {
    std::vector<float> out(in.q.size(), kPoison);
    auto run = [&](auto kernel) {  // the instantiation the launcher takes (prefill_multi_group)
        k::launch(int((in.n_q + k::kBQ - 1) / k::kBQ), int(in.H), k::kPrefillThreads, k::prefill_smem_bytes(D), [&] {
            kernel(in.q.data(), in.kc.data(), in.vc.data(), in.n_q, in.L, in.ctx, int(in.H), int(in.KV),
                   int(in.H / in.KV), attention_scale(D), out.data());
        });
    };
    if (k::prefill_multi_group(in.L))
        run(k::prefill_kernel<D, B, true>);
    else
        run(k::prefill_kernel<D, B, false>);
    return out;
}

// Which decode kernel runs: the launcher's choice (decode_uses_pipe, decode_split_threads), or one
// forced: the split kernel with 64 or 128 threads a block, or the pipelined one with at least two
// splits a block (the launcher gives it one split a block, since it sends caches of 256 pairs and
// more to the split kernel).
enum class Pick { launcher, split64, split128, pipe_runs };

template <int D, k::Bug B = k::Bug::none>
std::vector<float> decode(const Inputs& in, Pick pick = Pick::launcher) {
    std::vector<float> out(in.q.size(), kPoison);
    const int n_split = int(attn_splits(in.L)), G = int(in.H / in.KV);
    std::vector<float> part(size_t(in.H * n_split * (D + k::kPartPad)), kPoison);
    const bool pipe = pick == Pick::pipe_runs || (pick == Pick::launcher && k::decode_uses_pipe(n_split, in.KV, G, D));
    if (pipe) {
        const int per = std::max(int(k::decode_pipe_splits_per_block(n_split, in.KV)), pick == Pick::pipe_runs ? 2 : 1);
        k::launch((n_split + per - 1) / per, int(in.KV), k::kPipeThreads, k::decode_pipe_smem_bytes(D, G), [&] {
            auto run = [&](auto kernel) {
                kernel(in.q.data(), in.kc.data(), in.vc.data(), in.L, in.ctx, int(in.KV), G, attention_scale(D),
                       n_split, per, part.data(), out.data());
            };
            switch (k::decode_chunk(G)) {
                case 4: return run(k::decode_pipe_kernel<D, 4, B>);
                case 7: return run(k::decode_pipe_kernel<D, 7, B>);
                default: return run(k::decode_pipe_kernel<D, 8, B>);
            }
        });
    } else {  // the split kernel (long caches, head_dim 128, groups over 8 heads; or forced)
        const int T = pick == Pick::split64    ? 64
                      : pick == Pick::split128 ? 128
                                               : k::decode_split_threads(n_split, in.KV, D);
        if constexpr (D < 128) {
            EXPECT_EQ(T, 64) << "128 threads a split block only at head_dim 128";
        }
        k::with_split_threads<D>(T, [&](auto threads) {
            constexpr int TT = decltype(threads)::value;
            k::launch(n_split, int(in.KV), TT, k::decode_smem_bytes(D, G, TT), [&] {
                auto run = [&](auto kernel) {
                    kernel(in.q.data(), in.kc.data(), in.vc.data(), in.L, in.ctx, int(in.KV), G, attention_scale(D),
                           n_split, part.data(), out.data());
                };
                switch (k::decode_chunk(G)) {
                    case 4: return run(k::decode_split_kernel<D, 4, TT, B>);
                    case 7: return run(k::decode_split_kernel<D, 7, TT, B>);
                    default: return run(k::decode_split_kernel<D, 8, TT, B>);
                }
            });
        });
    }
    if (n_split > 1) {
        const k::CombineLaunch combine = k::combine_for<D, B>(n_split);
        k::launch(int(in.H), D / k::kCombineDims, combine.threads, 0,
                  [&] { combine.kernel(part.data(), n_split, out.data()); });
    }
    return out;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

std::string first_diff(const std::vector<float>& got, const std::vector<float>& want) {
    for (size_t i = 0; i < want.size(); ++i)
        if (f32_bits(got[i]) != f32_bits(want[i]))
            return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + " vs " + std::to_string(want[i]);
    return "";
}

struct S { int64_t n_q, L, ctx, H, KV; const char* profile; };

// The prefill kernel against the model byte for byte at both head dims.
void expect_prefill_equals_model(const S& s) {
    const Inputs a = make(s.n_q, s.L, s.ctx, s.H, s.KV, 64, s.profile);
    EXPECT_TRUE(same(prefill<64>(a), model(a))) << "D 64 n_q " << s.n_q << " L " << s.L << ": "
                                                << first_diff(prefill<64>(a), model(a));
    const Inputs b = make(s.n_q, s.L, s.ctx, s.H, s.KV, 128, s.profile);
    EXPECT_TRUE(same(prefill<128>(b), model(b))) << "D 128 n_q " << s.n_q << " L " << s.L << ": "
                                                 << first_diff(prefill<128>(b), model(b));
}

}  // namespace

TEST(AttentionSim, PrefillKernelEqualsModel) {
    for (const S& s : {S{1, 1, 5, 4, 2, "uniform"}, S{5, 5, 9, 2, 1, "uniform"}, S{70, 70, 80, 2, 2, "outliers"},
                       S{17, 300, 310, 4, 2, "normal"}, S{65, 200, 200, 2, 1, "uniform"}, S{1, 300, 310, 3, 1, "zeros"}})
        expect_prefill_equals_model(s);
}

TEST(AttentionSim, PrefillKernelEqualsModelAcrossFoldGroups) {
    // The fold's second level in prefill: chunks of 70 queries whose rows end in split 31 (the
    // last of group 0) or 32 (the first of group 1), so a tile's last split starts a group some of
    // its rows never reach; or in split 33 or 34, so some rows' group ends before the tile's last
    // split and away from a group's end; and one query over three groups, the last ragged (65
    // splits).
    for (const S& s : {S{70, 4130, 4140, 2, 1, "normal"}, S{70, 4370, 4380, 2, 1, "uniform"},
                       S{1, 8300, 8310, 2, 2, "outliers"}})
        expect_prefill_equals_model(s);
}

TEST(AttentionSim, DecodeKernelsEqualModel) {
    // 1 split (no combine), split edges, 3 splits, groups over 8 heads (several passes of the
    // score and p.v loops; 14 heads: two passes of 7), and 258 splits (9 fold groups). At
    // head_dim 64 short caches of groups up to 8 heads take the pipelined kernel, larger groups the
    // split kernel; so do the 1,032 (split, kv head) pairs of 33,000 keys over 4 kv heads and the
    // 516 pairs over 2 (decode_uses_pipe). At head_dim 128 short caches take the split kernel's
    // 128-thread blocks, the 516 pairs its 64-thread ones (decode_split_threads). The pipelined
    // kernel also runs those 516 pairs two splits a block (its ring of slots wrapping around), the
    // split kernel every shorter shape with both block sizes (the next test).
    for (const S& s : {S{1, 1, 5, 4, 2, "uniform"}, S{1, 128, 140, 14, 2, "outliers"}, S{1, 129, 129, 7, 1, "normal"},
                       S{1, 300, 310, 4, 2, "zeros"}, S{1, 200, 210, 12, 1, "normal"}, S{1, 5, 9, 64, 1, "outliers"},
                       S{1, 260, 270, 14, 1, "normal"},
                       S{1, 33000, 33001, 1, 1, "outliers"}, S{1, 33000, 33001, 2, 2, "normal"},
                       S{1, 33000, 33001, 4, 4, "uniform"}}) {
        const Inputs a = make(s.n_q, s.L, s.ctx, s.H, s.KV, 64, s.profile);
        EXPECT_TRUE(same(decode<64>(a), model(a))) << "D 64 L " << s.L << ": " << first_diff(decode<64>(a), model(a));
        if (s.H == 2 && s.KV == 2) {
            EXPECT_TRUE(same(decode<64>(a, Pick::pipe_runs), model(a)))
                << "pipelined, runs of splits: " << first_diff(decode<64>(a, Pick::pipe_runs), model(a));
        }
        // One head dim is enough for the long ones, but for the 2 x 2 one.
        if (s.L > 1000 && !(s.H == 2 && s.KV == 2)) continue;
        const Inputs b = make(s.n_q, s.L, s.ctx, s.H, s.KV, 128, s.profile);
        EXPECT_TRUE(same(decode<128>(b), model(b))) << "D 128 L " << s.L << ": " << first_diff(decode<128>(b), model(b));
        if (s.H == 2 && s.KV == 2) {
            EXPECT_TRUE(same(decode<128>(b, Pick::pipe_runs), model(b)))
                << "pipelined, runs of splits: " << first_diff(decode<128>(b, Pick::pipe_runs), model(b));
        }
    }
}

TEST(AttentionSim, EveryDefectChangesTheBytes) {
    // What the device mutants are expected to show, seen here first: each defect on a shape that
    // exposes it gives other bytes than the model (or leaves the poison in place).
    const Inputs p = make(40, 200, 210, 4, 2, 64, "uniform");
    const auto want_p = model(p);
    EXPECT_FALSE(same(prefill<64, k::Bug::non_causal>(p), want_p));
    EXPECT_FALSE(same(prefill<64, k::Bug::kv_head_mod>(p), want_p));
    const auto tail = prefill<64, k::Bug::tail_unwritten>(p);
    EXPECT_EQ(tail.back(), kPoison);
    const Inputs d = make(1, 300, 310, 4, 2, 64, "uniform");
    const auto want_d = model(d);
    EXPECT_FALSE(same(decode<64, k::Bug::kv_head_mod>(d), want_d));
    EXPECT_FALSE(same(decode<64, k::Bug::skip_last_split>(d), want_d));
    const auto past = decode<64, k::Bug::read_past_L>(d);
    EXPECT_TRUE(std::isnan(past[0])) << "the poison after L reaches out";
    // The same defects in the split kernel (groups of 12 heads take it; two kv heads, so that the
    // head-to-kv-head defect has another head to read).
    const Inputs e = make(1, 300, 310, 24, 2, 64, "uniform");
    const auto want_e = model(e);
    EXPECT_FALSE(same(decode<64, k::Bug::kv_head_mod>(e), want_e));
    EXPECT_FALSE(same(decode<64, k::Bug::skip_last_split>(e), want_e));
    EXPECT_TRUE(std::isnan(decode<64, k::Bug::read_past_L>(e)[0])) << "the poison after L reaches out";
    // And in its 128-thread blocks, which short caches take at head_dim 128.
    const Inputs f = make(1, 300, 310, 14, 2, 128, "uniform");
    const auto want_f = model(f);
    EXPECT_FALSE(same(decode<128, k::Bug::kv_head_mod>(f), want_f));
    EXPECT_FALSE(same(decode<128, k::Bug::skip_last_split>(f), want_f));
    EXPECT_TRUE(std::isnan(decode<128, k::Bug::read_past_L>(f)[0])) << "the poison after L reaches out";
}

TEST(AttentionSim, CombineEqualsTheModelsTwoLevelFold) {
    // The combine alone, both kernels, on split results made up here, against ref::attention_fold
    // applied in the order's two levels (runs of 32 splits, then the runs' states): the warp
    // kernel up to one group, the group kernel at any count (one group, a ragged last group, more
    // groups than its 8 warps take in one round). Maxima rise, fall and repeat (ties), and some
    // sit more than 104 below (weights of exactly 0 and 1).
    constexpr int D = 64, H = 2;
    for (const int n_split : {2, 3, 17, 31, 32, 33, 64, 255, 256, 257, 300, 512, 513, 777}) {
        std::vector<float> part(size_t(H) * n_split * (D + k::kPartPad));
        uint64_t x = 0x9e3779b97f4a7c15ull * uint64_t(n_split);
        auto next = [&] {  // a small deterministic generator (xorshift): values in [-1, 1)
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            return float(int64_t(x >> 40) - (int64_t(1) << 23)) / float(1 << 23);
        };
        for (int h = 0; h < H; ++h)
            for (int c = 0; c < n_split; ++c) {
                float* r = &part[(size_t(h) * n_split + c) * (D + k::kPartPad)];
                for (int d = 0; d < D; ++d) r[d] = 40.0f * next();
                const int kind = c % 5;
                r[D] = kind == 0 ? 6.0f * next() : kind == 1 ? r[D - (D + k::kPartPad)] : kind == 2 ? -120.0f : 3.0f + c / 64.0f;
                r[D + 1] = 1.0f + 60.0f * (next() + 1.0f);
            }
        std::vector<float> want(size_t(H) * D), got(size_t(H) * D, kPoison);
        for (int h = 0; h < H; ++h) {
            const float* ph = &part[size_t(h) * n_split * (D + k::kPartPad)];
            float M = 0.0f, Ls = 0.0f;
            std::vector<float> A(static_cast<size_t>(D));
            for (int g0 = 0; g0 < n_split; g0 += int(kAttnFoldGroup)) {
                const float* r0 = ph + size_t(g0) * (D + k::kPartPad);
                float GM = r0[D], GLs = r0[D + 1];
                std::vector<float> GA(r0, r0 + D);
                for (int c = g0 + 1; c < std::min(n_split, g0 + int(kAttnFoldGroup)); ++c) {
                    const float* r = ph + size_t(c) * (D + k::kPartPad);
                    ref::attention_fold(GM, GLs, GA.data(), r[D], r[D + 1], r, D);
                }
                if (g0 == 0)
                    M = GM, Ls = GLs, A = GA;
                else
                    ref::attention_fold(M, Ls, A.data(), GM, GLs, GA.data(), D);
            }
            for (int d = 0; d < D; ++d) want[size_t(h) * D + d] = A[size_t(d)] / Ls;
        }
        k::launch(H, D / k::kCombineDims, 32 * k::kCombineGroupWarps, 0,
                  [&] { k::decode_combine_groups_kernel<D, k::Bug::none>(part.data(), n_split, got.data()); });
        EXPECT_TRUE(same(got, want)) << "groups, " << n_split << " splits: " << first_diff(got, want);
        if (n_split <= kAttnFoldGroup) {
            std::fill(got.begin(), got.end(), kPoison);
            k::launch(H, D / k::kCombineDims, 32, 0,
                      [&] { k::decode_combine_warp_kernel<D, k::Bug::none>(part.data(), n_split, got.data()); });
            EXPECT_TRUE(same(got, want)) << "warp, " << n_split << " splits: " << first_diff(got, want);
        }
    }
}

TEST(AttentionSim, SplitKernelEqualsModelOnShortCaches) {
    // The launcher sends groups of up to 8 heads with short caches to the pipelined kernel at
    // head_dim 64 and to 128-thread split blocks at 128; the split kernel with either block size
    // must hold there too: one split, a ragged last split, stages past the last key, groups of 4,
    // 7, 8 and passes of heads (12, 14).
    for (const S& s : {S{1, 1, 5, 4, 2, "uniform"}, S{1, 5, 9, 7, 1, "uniform"}, S{1, 128, 130, 14, 2, "outliers"},
                       S{1, 129, 140, 8, 1, "normal"}, S{1, 300, 310, 12, 1, "zeros"}, S{1, 1000, 1003, 28, 4, "uniform"},
                       S{1, 700, 700, 6, 2, "normal"}}) {
        const Inputs a = make(s.n_q, s.L, s.ctx, s.H, s.KV, 64, s.profile);
        const Inputs b = make(s.n_q, s.L, s.ctx, s.H, s.KV, 128, s.profile);
        EXPECT_TRUE(same(decode<64>(a, Pick::split64), model(a)))
            << "D 64 L " << s.L << ": " << first_diff(decode<64>(a, Pick::split64), model(a));
        for (const Pick pick : {Pick::split64, Pick::split128})
            EXPECT_TRUE(same(decode<128>(b, pick), model(b)))
                << "D 128 L " << s.L << (pick == Pick::split64 ? ", 64" : ", 128") << " threads: "
                << first_diff(decode<128>(b, pick), model(b));
    }
}
