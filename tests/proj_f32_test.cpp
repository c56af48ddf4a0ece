// proj_f32: the model's order against hand-derived values, its accuracy against double, and the
// kernel against the model on a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "gpu.hpp"
#include "proj_f32.hpp"

#if defined(BITGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "../kernels/proj_f32.cuh"
#endif

namespace {

using namespace bitgate;

float row(const std::vector<float>& w, const std::vector<float>& x) {
    float y;
    ref::proj_f32(w.data(), x.data(), &y, 1, int64_t(x.size()));
    return y;
}

// Within a float4 group the components are fmas in order x, y, z, w: 1 + 2^-24 rounds to 1
// twice, where (2^-24 + 2^-24) + 1 would be 1 + 2^-23.
TEST(ProjF32Model, ComponentsInOrder) {
    const float tiny = std::ldexp(1.0f, -24);
    std::vector<float> x = {1.0f, 1.0f, 1.0f, 0.0f};
    EXPECT_EQ(row({1.0f, tiny, tiny, 0.0f}, x), 1.0f);
    EXPECT_EQ(row({tiny, tiny, 1.0f, 0.0f}, x), 1.0f + 2 * tiny);
}

// Lane 0 holds 1, lanes 16 and 17 hold 2^-24: the tree pairs 0 with 16 first, so 1 + 2^-24 rounds
// to 1 twice (an ascending tree would give 1 + 2^-23).
TEST(ProjF32Model, TreeIsSixteenFirst) {
    const float tiny = std::ldexp(1.0f, -24);
    std::vector<float> w(18 * 4, 0.0f), x(18 * 4, 1.0f);
    w[0] = 1.0f;
    w[16 * 4] = tiny;
    w[17 * 4] = tiny;
    EXPECT_EQ(row(w, x), 1.0f);
}

// Groups 0 and 32 are lane 0's, in that order: 2^-24 + 2^-24 is exact, and the tree then adds
// lane 1's 1.0: 1 + 2^-23. Had group 32 gone to another lane it would meet 1.0 alone: 1.0.
TEST(ProjF32Model, LanesStrideByThirtyTwoGroups) {
    const float tiny = std::ldexp(1.0f, -24);
    std::vector<float> w(33 * 4, 0.0f), x(33 * 4, 1.0f);
    w[0] = tiny;
    w[1 * 4] = 1.0f;
    w[32 * 4] = tiny;
    EXPECT_EQ(row(w, x), 1.0f + 2 * tiny);
}

TEST(ProjF32Model, WithinRoundingBoundOfExactSum) {
    for (int64_t k : {4, 128, 132, 4096}) {
        const int64_t n = 16;
        std::vector<uint8_t> wb(size_t(n * k) * 4), xb(size_t(k) * 4);
        inputs::fill_f32(wb, GenRequest{.seed = 3, .profile = "normal", .tensor = "w"}, uint64_t(k));
        inputs::fill_f32(xb, GenRequest{.seed = 3, .profile = "outliers", .tensor = "x"}, uint64_t(k));
        const float* w = reinterpret_cast<const float*>(wb.data());
        const float* x = reinterpret_cast<const float*>(xb.data());
        std::vector<float> y(static_cast<size_t>(n));
        ref::proj_f32(w, x, y.data(), n, k);
        for (int64_t r = 0; r < n; ++r) {
            double exact = 0, mag = 0;
            for (int64_t i = 0; i < k; ++i) {
                exact += double(w[r * k + i]) * double(x[i]);
                mag += std::fabs(double(w[r * k + i]) * double(x[i]));
            }
            EXPECT_LE(std::fabs(double(y[size_t(r)]) - exact), double(k / 4 + 10) * 4 * 0x1p-24 * mag) << "k " << k << " row " << r;
        }
    }
}

TEST(ProjF32Device, KernelMatchesModel) {
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    struct Case {
        int64_t n, k;
    };
    for (const Case c : {Case{1, 4}, Case{3, 124}, Case{5, 132}, Case{1025, 260}, Case{4096, 4096}, Case{7, 4100}}) {
        for (const char* profile : {"uniform", "tiny", "signed_zero"}) {
            std::vector<uint8_t> wb(size_t(c.n * c.k) * 4), xb(size_t(c.k) * 4);
            inputs::fill_f32(wb, GenRequest{.seed = 5, .profile = profile, .tensor = "w"}, uint64_t(c.k));
            inputs::fill_f32(xb, GenRequest{.seed = 5, .profile = profile, .tensor = "x"}, uint64_t(c.k));
            std::vector<float> expect(static_cast<size_t>(c.n)), got(static_cast<size_t>(c.n));
            ref::proj_f32(reinterpret_cast<const float*>(wb.data()), reinterpret_cast<const float*>(xb.data()), expect.data(), c.n, c.k);
            // Aligned (float4 loads) and shifted by one float (scalar loads).
            for (size_t shift : {size_t(0), size_t(1)}) {
                float *w = nullptr, *x = nullptr, *y = nullptr;
                ASSERT_EQ(cudaMalloc(&w, wb.size() + 16), cudaSuccess);
                ASSERT_EQ(cudaMalloc(&x, xb.size() + 16), cudaSuccess);
                ASSERT_EQ(cudaMalloc(&y, got.size() * 4), cudaSuccess);
                ASSERT_EQ(cudaMemcpy(w + shift, wb.data(), wb.size(), cudaMemcpyHostToDevice), cudaSuccess);
                ASSERT_EQ(cudaMemcpy(x + shift, xb.data(), xb.size(), cudaMemcpyHostToDevice), cudaSuccess);
                cuda::proj_f32(w + shift, x + shift, y, c.n, c.k, nullptr);
                ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
                ASSERT_EQ(cudaMemcpy(got.data(), y, got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
                EXPECT_EQ(std::memcmp(got.data(), expect.data(), got.size() * 4), 0)
                    << "n=" << c.n << " k=" << c.k << " " << profile << " shift " << shift;
                cudaFree(w);
                cudaFree(x);
                cudaFree(y);
            }
        }
    }
#endif
}

}  // namespace
