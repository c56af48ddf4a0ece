// The rms_norm kernels' own source (kernels/rms_norm_kernels.cuh), run on the CPU under
// tests/cuda_sim.hpp, against the host models byte for byte: both launch shapes of the fused
// kernel (4 warps a row below 1,024 tokens, one from there), rows shorter than a warp's step,
// a last step of one 8-lane group, the 64-padded tail, poisoned outputs. This is the host-side
// check of the kernels' indexing and order; the device check is `bitgate check --device`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "bitgate/pad40.hpp"
#include "cuda_sim.hpp"
#include "quantize_pad40_t.hpp"
#include "rms_norm.hpp"
#include "rms_norm_inputs.hpp"

namespace bitgate::cuda_sim {
using namespace bitgate::cuda::sim;
}
#define cuda cuda_sim  // the kernels land in bitgate::cuda_sim: no symbol shared with the CUDA build
#include "../kernels/rms_norm_kernels.cuh"  // its #pragma unroll is nvcc's (CMakeLists.txt: -Wno-unknown-pragmas)
#undef cuda

using namespace bitgate;
namespace k = bitgate::cuda_sim;

namespace {

std::vector<float> gen(int64_t n, int64_t d, const char* profile) {
    return test::rms_gen(size_t(n * d), uint64_t(d), profile, "x");
}

const auto weights = test::rms_weights;

struct Out {
    std::vector<float> y;
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
};

Out poisoned(int64_t n, int64_t d) {
    Out o{std::vector<float>(size_t(n * d)), std::vector<uint8_t>(pad40_qs_bytes(n, d), 0xa5),
          std::vector<uint32_t>(pad40_sda_bytes(n, d) / 4)};
    std::memset(o.y.data(), 0xa5, o.y.size() * 4);
    std::memset(o.sda.data(), 0xa5, o.sda.size() * 4);
    return o;
}

const k::float4* f4(const std::vector<float>& v) { return reinterpret_cast<const k::float4*>(v.data()); }

// The launcher's choice (kernels/rms_norm.cu), run on the CPU.
Out fused_kernel(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t d) {
    Out o = poisoned(n, d);
    auto* y = reinterpret_cast<k::float4*>(o.y.data());
    const int P = k::rms_quant_parts(n);
    const int blocks = int(pad40_tokens(n) / (k::kRmsQuantWarps / P));
    k::launch(blocks, 1, k::kRmsQuantWarps * 32, 0, [&] {
        if (P == 4) k::rms::rms_norm_quant_f32_t_kernel<4>(f4(x), f4(w), y, n, d, o.qs.data(), o.sda.data());
        else k::rms::rms_norm_quant_f32_t_kernel<1>(f4(x), f4(w), y, n, d, o.qs.data(), o.sda.data());
    });
    return o;
}

Out model(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t d) {
    Out o = poisoned(n, d);
    ref::rms_norm_quant_f32_t(x.data(), w.data(), o.y.data(), n, d, o.qs.data(), o.sda.data());
    return o;
}

bool same(const Out& a, const Out& b) {
    return std::memcmp(a.y.data(), b.y.data(), a.y.size() * 4) == 0 && a.qs == b.qs && a.sda == b.sda;
}

}  // namespace

TEST(RmsNormSim, FusedKernelEqualsModel) {
    // The launcher's rule (docs/prefill.md): 4 warps a row below 1,024 tokens, one from there.
    EXPECT_EQ(k::rms_quant_parts(1023), 4);
    EXPECT_EQ(k::rms_quant_parts(1024), 1);
    // (n, d): 4 warps a row (n < 1024) and one (n >= 1024); d = 32 (one 8-lane group), 96, 1056
    // (a step and a group), 4128 (eight steps and a group); padded tails of 63, 1 and 0 rows
    // with 4 warps a row (127 rather than 1023 tokens for the tail of 1: the emulation runs a
    // thread per CUDA thread, and 1023 took 111 s), 0 and 63 with one.
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{1, 32}, {65, 96}, {3, 1056}, {64, 4128}, {127, 32},
                               {1024, 96}, {1025, 160}}) {
        for (const char* profile : {"normal", "outliers"}) {
            const auto x = gen(n, d, profile);
            const auto w = weights(d);
            EXPECT_TRUE(same(fused_kernel(x, w, n, d), model(x, w, n, d))) << n << " x " << d << " " << profile;
        }
    }
}

// The unfused kernel as its launcher shapes it (kernels/rms_norm.cu): 8 warps a row up to 64
// tokens, one from 65.
std::vector<float> unfused_kernel(const std::vector<float>& x, const std::vector<float>& w, int64_t n, int64_t d) {
    std::vector<float> got(size_t(n * d), -1.0f);
    auto* y = reinterpret_cast<k::float4*>(got.data());
    const int P = k::rms_f32_parts(n), rows = k::kRmsRowsPerBlock / P;
    k::launch(int((n + rows - 1) / rows), 1, k::kRmsThreads, 0, [&] {
        if (P == k::kRmsRowsPerBlock) k::rms::rms_norm_f32_kernel<k::kRmsRowsPerBlock>(f4(x), f4(w), y, n, d);
        else k::rms::rms_norm_f32_kernel<1>(f4(x), f4(w), y, n, d);
    });
    return got;
}

TEST(RmsNormSim, UnfusedKernelEqualsModel) {
    EXPECT_EQ(k::rms_f32_parts(1), k::kRmsRowsPerBlock);
    EXPECT_EQ(k::rms_f32_parts(64), k::kRmsRowsPerBlock);
    EXPECT_EQ(k::rms_f32_parts(65), 1);
    // 8 warps a row: d = 32 (one word a lane, 7 warps without a step), 3584 (a decode row: 28
    // steps over 8 warps, one batch each), 4128 (a ragged last step), 40960 (several batches a
    // warp, two trips of the first pass), n = 64 (the last such n); one warp a row: 65 and 17 x 4128.
    for (const auto& [n, d] : {std::pair<int64_t, int64_t>{1, 32}, {1, 3584}, {2, 4128}, {1, 40960}, {64, 96},
                               {9, 96}, {65, 160}, {70, 4128}}) {
        const auto x = gen(n, d, "normal");
        const auto w = weights(d);
        std::vector<float> want(size_t(n * d));
        ref::rms_norm_f32(x.data(), w.data(), want.data(), n, d);
        const auto got = unfused_kernel(x, w, n, d);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * 4), 0) << n << " x " << d;
    }
    // The check can fail: one weight an ulp up moves the bytes, on the 8-warp shape too.
    const int64_t n = 1, d = 3584;
    const auto x = gen(n, d, "normal");
    auto w = weights(d);
    std::vector<float> want(size_t(n * d));
    ref::rms_norm_f32(x.data(), w.data(), want.data(), n, d);
    w[3000] = std::nextafter(w[3000], 2.0f);
    EXPECT_NE(std::memcmp(unfused_kernel(x, w, n, d).data(), want.data(), want.size() * 4), 0);
}

// The check can fail: the kernel run with one weight one ulp up no longer gives the model's bytes.
TEST(RmsNormSim, AWeightOneUlpOffChangesTheBytes) {
    const int64_t n = 5, d = 1056;
    const auto x = gen(n, d, "normal");
    const auto w = weights(d);
    auto w_off = w;
    w_off[17] = std::nextafter(w_off[17], 2.0f);
    const Out want = model(x, w, n, d);
    EXPECT_TRUE(same(fused_kernel(x, w, n, d), want));
    EXPECT_FALSE(same(fused_kernel(x, w_off, n, d), want));
}
