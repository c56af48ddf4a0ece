// mmq_q8_0: the epilogue identity the kernel relies on, the host model against an independent
// reading of docs/mmq_q8_0.md and against a double-precision GEMM, the generated plane, and the
// kernel (every tiling) against the model on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"
#include "gpu.hpp"
#include "mmq_q8_0.hpp"
#include "registry.hpp"

#if defined(BITGATE_HAVE_CUDA)
#include <cuda_runtime.h>
#include "../kernels/mmq_q8_0.cuh"
#endif

using namespace bitgate;

namespace {

struct Case {
    int64_t n, N, K;
    std::vector<uint8_t> qs, sda, w;
};

Case make_case(int64_t n, int64_t N, int64_t K, const std::string& profile, uint64_t seed = 1) {
    const FamilySpec& f = family("mmq_q8_0");
    Shape s{{"n", "N", "K"}, {n, N, K}};
    Case c{n, N, K, {}, {}, {}};
    std::vector<uint8_t>* bufs[3] = {&c.qs, &c.sda, &c.w};
    for (int i = 0; i < 3; ++i) {
        const TensorSpec& t = f.tensors[size_t(i)];
        bufs[i]->resize(t.bytes(s));
        t.generate(s, GenRequest{seed, profile, t.name}, *bufs[i]);
    }
    return c;
}

std::vector<float> model(const Case& c, ref::MmqOrder order = ref::MmqOrder::ascending,
                         ref::HostPath path = ref::HostPath::fastest) {
    std::vector<float> C(size_t(c.n * c.N));
    ref::mmq_q8_0(c.qs.data(), reinterpret_cast<const uint32_t*>(c.sda.data()),
                  reinterpret_cast<const BlockQ8_0*>(c.w.data()), C.data(), c.n, c.N, c.K, order, path);
    return C;
}

// The plane read back plainly: q of token t, chunk c, value k, and its scale.
int8_t plane_q(const Case& c, int64_t t, int64_t ch, int k) {
    return int8_t(c.qs[size_t(pad40_qs_at(t, ch, uint32_t(k / 4), c.K / 32)) + size_t(k % 4)]);
}
uint32_t plane_sda(const Case& c, int64_t t, int64_t ch) {
    uint32_t v;
    std::memcpy(&v, c.sda.data() + size_t(pad40_sda_at(t, ch, c.K / 32)) * 4, 4);
    return v;
}
const BlockQ8_0& weight(const Case& c, int64_t r, int64_t ch) {
    return reinterpret_cast<const BlockQ8_0*>(c.w.data())[r * (c.K / 32) + ch];
}
int32_t sumi(const Case& c, int64_t t, int64_t r, int64_t ch) {
    int32_t s = 0;
    for (int k = 0; k < 32; ++k) s += int32_t(plane_q(c, t, ch, k)) * int32_t(weight(c, r, ch).qs[k]);
    return s;
}

}  // namespace

// The kernel never converts int32 to float: the MMA accumulates onto kMagicBits and the float
// with those bits is kMagic + sumi; one fma with -kMagic * da then gives the rounded product.
TEST(MmqQ8_0Epilogue, BiasedSumIsExactAndTermIsTheRoundedProduct) {
    const uint16_t scales[] = {0x0001, 0x03ff, 0x0400, 0x1c00, 0x2e66, 0x3c00, 0x3c01, 0x5bff, 0x7bff, 0x8001, 0xbc00, 0x0000};
    for (uint16_t h : scales) {
        const float da = f16_to_f32(h), nm = mmq::neg_magic_times(da);
        EXPECT_EQ(double(nm), -12582912.0 * double(da)) << "kMagic * da must be exact, da bits " << h;
        for (int32_t s = -(1 << 19); s <= (1 << 19); ++s) {
            const float biased = f32_from_bits(uint32_t(mmq::kMagicBits + s));
            ASSERT_EQ(f32_bits(biased), f32_bits(float(s) + mmq::kMagic)) << s;
            const float term = mmq::chunk_term(biased, da, nm);
            // exact in double, rounded once; a zero product is +0 (the fma adds opposite zeros)
            const float want = float(double(s) * double(da)) == 0.0f ? 0.0f : float(double(s) * double(da));
            ASSERT_EQ(f32_bits(term), f32_bits(want)) << "sumi " << s << " da bits " << h;
        }
    }
}

// The model against the docs read independently: per (token, row), acc from +0, chunks in
// ascending order, term = RN(sumi * da), acc = RN(term * dw + acc). Integer sums from the plane
// through pad40's accessors, products through double.
TEST(MmqQ8_0Model, MatchesTheDocumentedEpilogueByteForByte) {
    for (const char* profile : {"uniform", "zeros", "raw_q8", "extreme", "tiny"}) {
        const Case c = make_case(67, 45, 288, profile, 3);
        const auto got = model(c);
        for (int64_t t = 0; t < c.n; ++t)
            for (int64_t r = 0; r < c.N; ++r) {
                float acc = 0.0f;
                for (int64_t ch = 0; ch < c.K / 32; ++ch) {
                    const float da = f16_to_f32(pad40_sda_d(plane_sda(c, t, ch)));
                    const float dw = f16_to_f32(weight(c, r, ch).d);
                    const float term = float(double(sumi(c, t, r, ch)) * double(da));
                    acc = std::fma(term, dw, acc);
                }
                ASSERT_EQ(f32_bits(got[size_t(t * c.N + r)]), f32_bits(acc)) << profile << " token " << t << " row " << r;
            }
    }
}

// Sanity of the whole: within a few float roundings per chunk of the exact dot product.
TEST(MmqQ8_0Model, IsCloseToADoublePrecisionGemm) {
    const Case c = make_case(130, 70, 1024, "uniform", 5);
    const auto got = model(c);
    double worst = 0.0;
    for (int64_t t = 0; t < c.n; ++t)
        for (int64_t r = 0; r < c.N; ++r) {
            double exact = 0.0, mag = 0.0;
            for (int64_t ch = 0; ch < c.K / 32; ++ch) {
                const double v = double(sumi(c, t, r, ch)) * f16_to_f32(pad40_sda_d(plane_sda(c, t, ch))) *
                                 f16_to_f32(weight(c, r, ch).d);
                exact += v;
                mag += std::fabs(v);
            }
            const double err = std::fabs(double(got[size_t(t * c.N + r)]) - exact);
            const double bound = 2.0 * double(c.K / 32) * std::ldexp(mag, -24);
            ASSERT_LE(err, bound) << "token " << t << " row " << r;
            if (mag > 0) worst = std::max(worst, err / mag);
        }
    EXPECT_GT(worst, 0.0);  // rounding happened: the comparison is not vacuous
}

// Every SIMD path is only a faster spelling of the plain one: byte for byte, over profiles with
// -128 in both operands (raw_q8, extreme), zero and tiny scales, ragged rows and tokens (16-row
// panels and 8-token tiles), and both orders.
TEST(MmqQ8_0Model, SimdPathsEqualScalarPath) {
    int ran = 0;
    for (const auto path : {ref::HostPath::avx2, ref::HostPath::avx512_vnni, ref::HostPath::fastest}) {
        if (!ref::host_path_available(path)) {
            std::printf("[ NOTE     ] this CPU has no %s path: not compared\n", ref::host_path_name(path));
            continue;
        }
        ++ran;
        for (const auto order : {ref::MmqOrder::ascending, ref::MmqOrder::stage_partials})
            for (const char* profile : {"uniform", "raw_q8", "extreme", "tiny", "zeros"})
                for (auto [n, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 32}, {5, 3, 96}, {64, 64, 256},
                                       {131, 77, 416}, {12, 33, 64}, {70, 17, 160}}) {
                    const Case c = make_case(n, N, K, profile);
                    const auto a = model(c, order, path), b = model(c, order, ref::HostPath::scalar);
                    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0)
                        << ref::host_path_name(path) << " " << profile << " " << n << "x" << N << "x" << K;
                }
    }
    EXPECT_GT(ran, 0);  // `fastest` always runs
}

// The order is observable: summing the same terms per 4-chunk stage first changes bytes (the
// host mutant's model), so a kernel that reassociates cannot hide behind the golden file.
TEST(MmqQ8_0Model, AnotherChunkOrderChangesTheBytes) {
    const Case c = make_case(64, 64, 512, "uniform");
    const auto a = model(c), b = model(c, ref::MmqOrder::stage_partials);
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) differ += f32_bits(a[i]) != f32_bits(b[i]);
    EXPECT_GT(differ, a.size() / 10);
}

// C holds exactly n x N floats and the model writes every one of them and nothing past.
TEST(MmqQ8_0Model, WritesEveryRealElementAndNothingElse) {
    for (auto [n, N] : {std::pair<int64_t, int64_t>{1, 1}, {63, 65}, {65, 63}, {129, 130}}) {
        const Case c = make_case(n, N, 160, "uniform");
        std::vector<float> C(size_t(n * N) + 64, std::numeric_limits<float>::quiet_NaN());
        ref::mmq_q8_0(c.qs.data(), reinterpret_cast<const uint32_t*>(c.sda.data()),
                      reinterpret_cast<const BlockQ8_0*>(c.w.data()), C.data(), n, N, 160);
        for (size_t i = 0; i < size_t(n * N); ++i) ASSERT_FALSE(std::isnan(C[i])) << i;
        for (size_t i = size_t(n * N); i < C.size(); ++i) ASSERT_TRUE(std::isnan(C[i])) << i;
    }
}

// The generated plane is one the quantizer could have written: zeros for padded tokens in both
// planes, ssum the sum of the token's q, q in [-128, 127] (by type) and d finite.
TEST(MmqQ8_0Inputs, GeneratedPlaneIsValid) {
    for (const char* profile : {"uniform", "zeros", "extreme", "tiny"}) {
        const Case c = make_case(70, 1, 96, profile);
        const int64_t padded = pad40_tokens(c.n);
        for (int64_t t = 0; t < padded; ++t)
            for (int64_t ch = 0; ch < c.K / 32; ++ch) {
                int32_t s = 0;
                for (int k = 0; k < 32; ++k) s += plane_q(c, t, ch, k);
                const uint32_t v = plane_sda(c, t, ch);
                if (t >= c.n) {
                    ASSERT_EQ(v, 0u);
                    ASSERT_EQ(s, 0);
                    for (int k = 0; k < 32; ++k) ASSERT_EQ(plane_q(c, t, ch, k), 0);
                    continue;
                }
                ASSERT_EQ(pad40_sda_ssum(v), s) << profile << " token " << t << " chunk " << ch;
                ASSERT_TRUE(std::isfinite(f16_to_f32(pad40_sda_d(v))));
            }
    }
}

// ---- device ------------------------------------------------------------------------------------

#if defined(BITGATE_HAVE_CUDA)
namespace {

template <class T>
T* upload(const std::vector<T>& h) {
    T* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

std::vector<float> device(const Case& c, cuda::MmqTiling tiling) {
    uint8_t* qs = upload(c.qs);
    uint8_t* sda = upload(c.sda);
    uint8_t* w = upload(c.w);
    float* C = nullptr;
    const size_t bytes = size_t(c.n * c.N) * 4;
    EXPECT_EQ(cudaMalloc(&C, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(C, 0xA5, bytes), cudaSuccess);
    cuda::mmq_q8_0(qs, reinterpret_cast<const uint32_t*>(sda), reinterpret_cast<const BlockQ8_0*>(w), C, c.n, c.N, c.K,
                   tiling, nullptr);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> out(size_t(c.n * c.N));
    EXPECT_EQ(cudaMemcpy(out.data(), C, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(qs);
    cudaFree(sda);
    cudaFree(w);
    cudaFree(C);
    return out;
}

}  // namespace
#endif

TEST(MmqQ8_0Device, EveryTilingMatchesTheModelByteForByte) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    const cuda::MmqTiling tilings[] = {cuda::MmqTiling::automatic, cuda::MmqTiling::t128x128, cuda::MmqTiling::t64x128,
                                       cuda::MmqTiling::t64x64};
    const std::tuple<int64_t, int64_t, int64_t> shapes[] = {
        {1, 1, 32}, {63, 37, 96}, {65, 64, 256}, {127, 65, 288}, {128, 128, 192}, {193, 257, 416},
        {255, 383, 928}, {130, 250, 2048}, {512, 896, 896}, {129, 3584, 3584}};
    for (const char* profile : {"uniform", "raw_q8", "extreme", "zeros"})
        for (auto [n, N, K] : shapes) {
            const Case c = make_case(n, N, K, profile);
            const auto want = model(c);
            for (auto tiling : tilings) {
                const auto got = device(c, tiling);
                size_t bad = 0, first = 0;
                for (size_t i = 0; i < want.size(); ++i)
                    if (f32_bits(want[i]) != f32_bits(got[i]) && bad++ == 0) first = i;
                ASSERT_EQ(bad, 0u) << profile << " n=" << n << " N=" << N << " K=" << K << " tiling " << int(tiling)
                                   << ": first at token " << first / size_t(N) << " row " << first % size_t(N);
            }
        }
#endif
}

// The weights need only their natural 2-byte alignment: every cp.async width and the plain
// 2-byte path, by offsetting the weight pointer.
TEST(MmqQ8_0Device, MisalignedWeightsTakeNarrowerCopiesWithTheSameBytes) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    const Case c = make_case(100, 70, 256, "uniform");
    const auto want = model(c);
    for (size_t shift : {2u, 4u, 6u, 8u}) {
        std::vector<uint8_t> wpad(c.w.size() + shift);
        std::memcpy(wpad.data() + shift, c.w.data(), c.w.size());
        uint8_t* qs = upload(c.qs);
        uint8_t* sda = upload(c.sda);
        uint8_t* w = upload(wpad);
        float* C = nullptr;
        ASSERT_EQ(cudaMalloc(&C, want.size() * 4), cudaSuccess);
        cuda::mmq_q8_0(qs, reinterpret_cast<const uint32_t*>(sda), reinterpret_cast<const BlockQ8_0*>(w + shift), C, c.n,
                       c.N, c.K, cuda::MmqTiling::t128x128, nullptr);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        std::vector<float> got(want.size());
        ASSERT_EQ(cudaMemcpy(got.data(), C, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << "weights offset by " << shift;
        cudaFree(qs);
        cudaFree(sda);
        cudaFree(w);
        cudaFree(C);
    }
#endif
}
