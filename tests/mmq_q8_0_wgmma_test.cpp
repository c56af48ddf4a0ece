// mmq_q8_0/wgmma, the Hopper variant: the layout argument that lets wgmma read the activation
// plane as it lies in memory (host, everywhere), its place in the claim group, and on an sm_90
// device the kernel against the host model and the mma.sync kernel, byte for byte, on ragged
// shapes and misaligned weights.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "../kernels/sm90a/mmq_q8_0_wgmma_layout.hpp"
#include "bitgate/pad40.hpp"
#include "gpu.hpp"
#include "mmq_q8_0.hpp"
#include "registry.hpp"
#include "sm90a/mmq_q8_0_wgmma.cuh"

#if defined(BITGATE_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

using namespace bitgate;

namespace {

// The 32-byte swizzle as the PTX ISA defines it (CuTe's Swizzle<1,4,3> on byte addresses: bit 4
// ^= bit 7), written here from that definition rather than taken from the header under test.
uint32_t swizzle_1_4_3(uint32_t addr) { return addr ^ ((addr >> 3) & 0x10u); }

TEST(MmqWgmmaLayout, TheSw32ModeReadsThePad40TileAsRowsOfOneTokenEach) {
    // wgmma row m, k-byte k of a K-major 32-byte-swizzle tile with 8-row groups 256 bytes apart:
    // logical address 32 * (m % 8) + 256 * (m / 8) + k, then the swizzle.
    std::vector<int> seen(64, 0);
    for (uint32_t m = 0; m < 64; ++m) {
        const uint32_t tok = wgmma_layout::pad40_row_token(m);
        ASSERT_LT(tok, 64u);
        ++seen[tok];
        for (uint32_t k = 0; k < 32; ++k) {
            const uint32_t hw = swizzle_1_4_3(32 * (m % 8) + 256 * (m / 8) + k);
            EXPECT_EQ(wgmma_layout::sw32_at(m, k), hw) << "m " << m << " k " << k;
            // The same byte of the plane: token tok, value k (word k / 4, byte k % 4).
            EXPECT_EQ(hw, pad40_qs_offset(tok, k / 4) + k % 4) << "m " << m << " k " << k;
        }
    }
    for (int t = 0; t < 64; ++t) EXPECT_EQ(seen[size_t(t)], 1) << "token " << t << " must be read by exactly one row";
}

TEST(MmqWgmmaLayout, RowScalesSitWhereTheFragmentReadsThem) {
    // Thread quad lane t reads float4 number 4p + t of a chunk's scales for its columns
    // 16p + 2t, +1 (n-slab 2p) and 16p + 8 + 2t, +1 (n-slab 2p + 1).
    std::vector<int> seen(128, 0);
    for (uint32_t rr = 0; rr < 128; ++rr) {
        const uint32_t s = wgmma_layout::dw_slot(rr);
        ASSERT_LT(s, 128u);
        ++seen[s];
    }
    for (int i = 0; i < 128; ++i) EXPECT_EQ(seen[size_t(i)], 1);
    for (uint32_t p = 0; p < 8; ++p)
        for (uint32_t t = 0; t < 4; ++t) {
            const uint32_t rows[4] = {16 * p + 2 * t, 16 * p + 2 * t + 1, 16 * p + 8 + 2 * t, 16 * p + 8 + 2 * t + 1};
            for (uint32_t c = 0; c < 4; ++c) EXPECT_EQ(wgmma_layout::dw_slot(rows[c]), (4 * p + t) * 4 + c);
        }
}

TEST(MmqWgmmaLayout, TheVariantJoinsTheClaimGroupWithTheSameModel) {
    const FamilySpec& f = family("mmq_q8_0");
    const VariantSpec& w = variant(f, "wgmma");
    EXPECT_FALSE(w.claim.empty());
    for (const char* other : {"mma", "dispatch", "t128x128", "t64x128", "t64x64"}) EXPECT_EQ(variant(f, other).claim, w.claim);
}

#if defined(BITGATE_HAVE_CUDA)

struct Inputs {
    std::vector<uint8_t> qs, sda, w;
};

Inputs inputs(const Shape& s, const std::string& profile, uint64_t seed) {
    const FamilySpec& f = family("mmq_q8_0");
    Inputs in;
    std::vector<uint8_t>* bufs[3] = {&in.qs, &in.sda, &in.w};
    for (int i = 0; i < 3; ++i) {
        const TensorSpec& t = f.tensors[size_t(i)];
        bufs[i]->resize(t.bytes(s));
        t.generate(s, GenRequest{seed, profile, t.name}, *bufs[i]);
    }
    return in;
}

constexpr size_t kGuardFloats = 64;
constexpr uint8_t kPoison = 0xA5;

// Runs the launcher of `variant` (its `.launch`), or for "wgmma_serial" the wgmma kernel without
// the overlap through its plain launcher (no declared variant, so check and bench never list it:
// run beside `wgmma`, a device failure tells the pipeline's overlap apart from the rest). The
// weights start `shift` bytes into their buffer.
// Returns C, or an empty vector (with a failure recorded) when CUDA reports an error or a guard
// float after C was written.
std::vector<float> run(const std::string& variant_name, const Shape& s, const Inputs& in, size_t shift = 0) {
    const FamilySpec& f = family("mmq_q8_0");
    const size_t c_floats = size_t(s["n"] * s["N"]);
    uint8_t *qs = nullptr, *sda = nullptr, *w = nullptr;
    float* C = nullptr;
    EXPECT_EQ(cudaMalloc(&qs, in.qs.size()), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&sda, in.sda.size()), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&w, in.w.size() + shift), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&C, (c_floats + kGuardFloats) * 4), cudaSuccess);
    cudaMemcpy(qs, in.qs.data(), in.qs.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(sda, in.sda.data(), in.sda.size(), cudaMemcpyHostToDevice);
    cudaMemcpy(w + shift, in.w.data(), in.w.size(), cudaMemcpyHostToDevice);
    cudaMemset(C, kPoison, (c_floats + kGuardFloats) * 4);
    DeviceIo io{.family = &f};
    io.in = {qs, sda, w + shift};
    io.out = {C};
    std::vector<float> out;
    try {
        if (variant_name == "wgmma_serial") {
#if defined(BITGATE_HAVE_SM90A)
            cuda::mmq_q8_0_wgmma(qs, reinterpret_cast<const uint32_t*>(sda), reinterpret_cast<const BlockQ8_0*>(w + shift),
                                 C, s["n"], s["N"], s["K"], /*overlap=*/false, nullptr);
#else
            throw std::runtime_error("this build has no sm_90a kernels");
#endif
        } else {
            variant(f, variant_name).launch(s, io);
        }
        const cudaError_t e = cudaDeviceSynchronize();
        EXPECT_EQ(e, cudaSuccess) << variant_name << " " << s.str() << ": " << cudaGetErrorString(e);
        std::vector<float> all(c_floats + kGuardFloats);
        EXPECT_EQ(cudaMemcpy(all.data(), C, all.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        std::vector<uint8_t> guard(kGuardFloats * 4, kPoison);
        if (e == cudaSuccess) {
            EXPECT_EQ(std::memcmp(all.data() + c_floats, guard.data(), guard.size()), 0)
                << variant_name << " " << s.str() << " wrote past C";
            out.assign(all.begin(), all.begin() + std::ptrdiff_t(c_floats));
        }
    } catch (const std::exception& x) {
        ADD_FAILURE() << variant_name << " " << s.str() << ": " << x.what();
    }
    cudaFree(qs);
    cudaFree(sda);
    cudaFree(w);
    cudaFree(C);
    return out;
}

std::vector<float> model(const Shape& s, const Inputs& in) {
    std::vector<float> C(size_t(s["n"] * s["N"]));
    ref::mmq_q8_0(in.qs.data(), reinterpret_cast<const uint32_t*>(in.sda.data()),
                  reinterpret_cast<const BlockQ8_0*>(in.w.data()), C.data(), s["n"], s["N"], s["K"]);
    return C;
}

// First differing element, "token t row r", or "".
std::string first_difference(const Shape& s, const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return "sizes differ";
    for (size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], 4) != 0)
            return "token " + std::to_string(int64_t(i) / s["N"]) + " row " + std::to_string(int64_t(i) % s["N"]);
    return "";
}

// Skips unless the wgmma variant can run here.
#define REQUIRE_WGMMA()                                                                                        \
    do {                                                                                                       \
        BITGATE_REQUIRE_GPU();                                                                                 \
        if (!variant(family("mmq_q8_0"), "wgmma").launch)                                                      \
            GTEST_SKIP() << "device test skipped: this build has no sm_90a kernels (cmake/sm90a.cmake)";       \
        int dev = 0, major = 0, minor = 0;                                                                     \
        cudaGetDevice(&dev);                                                                                   \
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);                                \
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);                                \
        if (major != 9 || minor != 0)                                                                          \
            GTEST_SKIP() << "device test skipped: wgmma is built for sm_90a, this device is sm_" << major << minor; \
    } while (0)

TEST(MmqWgmmaDevice, MatchesTheModelAndTheMmaKernelByteForByte) {
    REQUIRE_WGMMA();
    struct Dims {
        int64_t n, N, K;
    };
    // Ragged tokens (n % 64, n % 128), rows (N % 128, N < 8), chunks (K/32 % 4, odd K/32), one
    // chunk, long K, and shapes of the models.
    const Dims dims[] = {{1, 1, 32},     {2, 8, 64},      {63, 37, 96},    {64, 64, 256},   {65, 63, 128},
                         {127, 65, 288}, {128, 128, 192}, {129, 129, 160}, {191, 127, 224}, {193, 257, 416},
                         {255, 383, 928}, {300, 130, 992}, {130, 250, 2048}, {60, 60, 288},  {256, 1, 1024},
                         {129, 200, 4096}, {65, 896, 896}, {512, 512, 3584}, {129, 4864, 896}};
    for (const Dims& d : dims)
        for (const char* profile : {"uniform", "extreme"}) {
            const Shape s{{"n", "N", "K"}, {d.n, d.N, d.K}};
            const Inputs in = inputs(s, profile, 7);
            const std::vector<float> want = model(s, in);
            const std::vector<float> mma = run("t128x128", s, in);
            // The variant (overlapped pipeline) and the same kernel without the overlap.
            for (const char* v : {"wgmma", "wgmma_serial"}) {
                const std::vector<float> got = run(v, s, in);
                ASSERT_FALSE(got.empty()) << v << " " << s.str();
                EXPECT_EQ(first_difference(s, want, got), "") << v << " vs the model, " << s.str() << " " << profile;
                EXPECT_EQ(first_difference(s, mma, got), "") << v << " vs t128x128, " << s.str() << " " << profile;
            }
        }
}

TEST(MmqWgmmaDevice, MisalignedWeightsGiveTheSameBytes) {
    REQUIRE_WGMMA();
    // Every 2-byte offset inside a 16-byte granule: the bulk copies read whole granules and the
    // repack shifts per row.
    for (const auto& [n, N, K] : {std::tuple<int64_t, int64_t, int64_t>{129, 200, 896}, {65, 63, 288}, {1, 130, 96}}) {
        const Shape s{{"n", "N", "K"}, {n, N, K}};
        const Inputs in = inputs(s, "uniform", 3);
        const std::vector<float> want = model(s, in);
        for (size_t shift = 0; shift < 16; shift += 2)
            for (const char* v : {"wgmma", "wgmma_serial"}) {
                const std::vector<float> got = run(v, s, in, shift);
                ASSERT_FALSE(got.empty()) << v << " " << s.str() << " shift " << shift;
                EXPECT_EQ(first_difference(s, want, got), "") << v << " " << s.str() << " weights shifted by " << shift
                                                              << " bytes";
            }
    }
}

TEST(MmqWgmmaDevice, RepeatedRunsGiveTheSameBytes) {
    REQUIRE_WGMMA();
    // The pipeline's phases must not leak timing into values: one shape, many runs.
    const Shape s{{"n", "N", "K"}, {257, 385, 3584}};
    const Inputs in = inputs(s, "raw_q8", 11);
    const std::vector<float> first = run("wgmma", s, in);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first_difference(s, model(s, in), first), "");
    for (int i = 0; i < 8; ++i) EXPECT_EQ(first_difference(s, first, run("wgmma", s, in)), "") << "run " << i;
}

#endif  // BITGATE_HAVE_CUDA

}  // namespace
