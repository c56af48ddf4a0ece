// The decode step's small launches (rms_norm_f32, rms_norm_q8_0, rope, kv_store, swiglu_f32,
// swiglu_q8_0, quantize_q8_0) are
// launched as dependents (kernels/pdl.cuh): each may be scheduled while the kernel before it is
// still running, and must wait for that kernel before it reads what it wrote. Here the kernel
// before is a slow writer of the test's own: it lets dependents start at once, then spins about
// 20 us before it writes the launcher's input (input A and input B in turn). Every launcher must
// give, round after round, the bytes of its own input of that round, on a stream and replayed
// from a CUDA graph. A control kernel launched the same way without the wait must read stale
// input at least once: it shows that the launches do overlap, so the checks above can fail.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gpu.hpp"

#if defined(BITGATE_HAVE_CUDA)
#include <cuda_runtime.h>

#include "../kernels/kv_store.cuh"
#include "../kernels/pdl.cuh"
#include "../kernels/quantize_q8_0.cuh"
#include "../kernels/rms_norm.cuh"
#include "../kernels/rms_norm_q8_0.cuh"
#include "../kernels/rope.cuh"
#include "../kernels/swiglu.cuh"
#include "../kernels/swiglu_q8_0.cuh"
#include "dependent_launch_kernels.cuh"
#include "graph_replay.hpp"

using namespace bitgate;

namespace {

namespace test_kernels = bitgate::test_kernels;

#define CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr << ": " << cudaGetErrorString(cudaGetLastError())

constexpr int64_t kTokens = 64, kHeads = 8, kHeadDim = 128, kWidth = kHeads * kHeadDim;  // x is [kTokens][kWidth]
constexpr int64_t kValues = kTokens * kWidth;
constexpr int kRounds = 8;

template <class T>
struct Dev {
    T* p = nullptr;
    size_t n = 0;
    explicit Dev(size_t count) : n(count) { cudaMalloc(&p, count * sizeof(T)); }
    ~Dev() { cudaFree(p); }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
    std::vector<uint8_t> bytes(size_t from, size_t count) const {
        std::vector<uint8_t> h(count * sizeof(T));
        cudaMemcpy(h.data(), p + from, h.size(), cudaMemcpyDeviceToHost);
        return h;
    }
};

// Values in [-2, 2) from an integer hash: the same on every machine.
std::vector<float> input(uint32_t seed) {
    std::vector<float> v(static_cast<size_t>(kValues));
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t h = uint32_t(i) * 2654435761u ^ seed * 2246822519u;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        v[i] = float(h >> 8) * (4.0f / 16777216.0f) - 2.0f;
    }
    return v;
}

// A launcher under test: reads in (kValues floats), writes round r's output at slot r.
struct Case {
    std::string name;
    size_t out_bytes;  // of one round
    std::function<void(const float* in, uint8_t* out, cudaStream_t s)> launch;
};

}  // namespace

TEST(DependentLaunchDevice, EachLauncherWaitsForTheKernelBeforeIt) {
    BITGATE_REQUIRE_GPU();
    int major = 0;
    CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9) GTEST_SKIP() << "device test skipped: dependent launches need sm_90 (this card is sm_" << major << "x)";

    const std::vector<float> ha = input(1), hb = input(2), hw = input(3);
    Dev<float> src{2 * size_t(kValues)}, buf{size_t(kValues)}, w{size_t(kWidth)};
    Dev<int32_t> pos{size_t(kTokens)};
    ASSERT_TRUE(src.p && buf.p && w.p && pos.p);
    std::vector<int32_t> hpos(static_cast<size_t>(kTokens));
    for (int64_t t = 0; t < kTokens; ++t) hpos[size_t(t)] = int32_t(1000 + 37 * t);
    CUDA_OK(cudaMemcpy(src.p, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(src.p + kValues, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(w.p, hw.data(), size_t(kWidth) * 4, cudaMemcpyHostToDevice));  // the first kWidth values
    CUDA_OK(cudaMemcpy(pos.p, hpos.data(), hpos.size() * 4, cudaMemcpyHostToDevice));

    const std::vector<Case> cases = {
        {"rms_norm_f32", kValues * 4,
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::rms_norm_f32(in, w.p, reinterpret_cast<float*>(out), kTokens, kWidth, s);
         }},
        {"rms_norm_q8_0", kValues * 4 + kValues / 32 * sizeof(BlockQ8_0),
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::rms_norm_q8_0(in, w.p, reinterpret_cast<float*>(out), reinterpret_cast<BlockQ8_0*>(out + kValues * 4),
                                 kTokens, kWidth, s);
         }},
        {"rope_neox_to", kValues * 4,
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::rope_neox_to(in, reinterpret_cast<float*>(out), kTokens, kHeads, kHeadDim, pos.p, 1000000.0f, s);
         }},
        {"kv_store_f16", kValues * 2,
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::kv_store_f16(in, kTokens, kHeads, kHeadDim, reinterpret_cast<uint16_t*>(out), kTokens, 0, s);
         }},
        {"swiglu_f32", kValues * 2,
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::swiglu_f32(in, in + kValues / 2, reinterpret_cast<float*>(out), kTokens / 2, kWidth, s);
         }},
        {"swiglu_q8_0", kValues * 2 + kValues / 64 * sizeof(BlockQ8_0),
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::swiglu_q8_0(in, in + kValues / 2, reinterpret_cast<float*>(out),
                               reinterpret_cast<BlockQ8_0*>(out + kValues * 2), kTokens / 2, kWidth, s);
         }},
        {"quantize_q8_0", kValues / 32 * sizeof(BlockQ8_0),
         [&](const float* in, uint8_t* out, cudaStream_t s) {
             cuda::quantize_q8_0(in, reinterpret_cast<BlockQ8_0*>(out), kValues, s);
         }},
        {"control: a copy launched as dependent without the wait", kValues * 4,
         [&](const float* in, uint8_t* out, cudaStream_t s) { test_kernels::copy_without_wait(in, out, kValues * 4, s); }},
    };

    cudaStream_t s = nullptr;
    CUDA_OK(cudaStreamCreate(&s));
    for (const Case& c : cases) {
        const bool control = c.name.rfind("control", 0) == 0;
        Dev<uint8_t> out{kRounds * c.out_bytes};
        ASSERT_TRUE(out.p);
        // The bytes of each input, the writer and the launcher apart (a synchronization between).
        std::vector<std::vector<uint8_t>> want(2);
        for (int k = 0; k < 2; ++k) {
            test_kernels::slow_write(src.p + k * kValues, buf.p, kValues, s);
            CUDA_OK(cudaStreamSynchronize(s));
            c.launch(buf.p, out.p, s);
            CUDA_OK(cudaStreamSynchronize(s));
            want[size_t(k)] = out.bytes(0, c.out_bytes);
        }
        ASSERT_NE(want[0], want[1]) << c.name << ": the two inputs give the same bytes";
        for (bool graph : {false, true}) {
            SCOPED_TRACE(c.name + (graph ? ", graph replay" : ", stream"));
            // The previous round's bytes sit in buf before every round: a launch that reads before
            // the writer is done sees the other input.
            CUDA_OK(cudaMemcpy(buf.p, src.p + kValues, kValues * 4, cudaMemcpyDeviceToDevice));
            CUDA_OK(cudaMemset(out.p, 0xa5, out.n));
            auto rounds = [&] {
                for (int r = 0; r < kRounds; ++r) {
                    test_kernels::slow_write(src.p + (r % 2) * kValues, buf.p, kValues, s);
                    c.launch(buf.p, out.p + r * c.out_bytes, s);
                }
            };
            if (graph) {
                CUDA_OK(test::replay_in_graph(s, rounds));
            } else {
                rounds();
                CUDA_OK(cudaStreamSynchronize(s));
            }
            int stale = 0;
            for (int r = 0; r < kRounds; ++r) {
                const bool fresh = out.bytes(r * c.out_bytes, c.out_bytes) == want[size_t(r % 2)];
                if (!control) {
                    EXPECT_TRUE(fresh) << "round " << r << " read its input before the writer was done";
                }
                stale += !fresh;
            }
            if (control) {
                EXPECT_GT(stale, 0) << "the control never read stale input: the launches did not overlap, so "
                                       "this test could not see a missing wait";
            }
        }
    }
    CUDA_OK(cudaStreamDestroy(s));
    CUDA_OK(cudaGetLastError());
}

#else

TEST(DependentLaunchDevice, EachLauncherWaitsForTheKernelBeforeIt) { BITGATE_REQUIRE_GPU(); }

#endif
