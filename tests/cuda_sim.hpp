// A CPU emulation of the few CUDA features the attention, rms_norm and quantize_pad40_t kernels use,
// so that their source (kernels/attention_kernels.cuh, kernels/rms_norm_kernels.cuh,
// kernels/quantize_pad40_t_kernel.cuh) runs on a machine without a GPU: one OS thread per CUDA thread,
// blocks one after another, __syncthreads and warp shuffles as std::barrier waits. It checks the
// kernels' indexing, masking, barriers and order against the host model; it cannot show what only
// the device does (its arithmetic is the host's IEEE arithmetic, proven equal for exp_det and the
// f16 conversions elsewhere; races that a barrier-free schedule would expose; memory traffic).
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bitgate/f16.hpp"

#define BITGATE_CUDA_SIM 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define BITGATE_DYNAMIC_SMEM(name) float4* name = ::bitgate::cuda::sim::dynamic_smem()

namespace bitgate::cuda::sim {

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct uint4 { uint32_t x, y, z, w; };
struct uint2 { uint32_t x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uint2 make_uint2(uint32_t a, uint32_t b) { return {a, b}; }
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return {a, b, c, d}; }
struct Index { int x = 0, y = 0, z = 0; };
inline thread_local Index threadIdx, blockIdx;

template <class A, class B> inline auto min(A a, B b) { return a < b ? a : b; }
template <class T> inline T __ldg(const T* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline uint16_t __ushort_as_half(uint16_t x) { return x; }
inline uint16_t __half_as_ushort(uint16_t x) { return x; }
inline float __half2float(uint16_t x) { return f16_to_f32(x); }
inline uint16_t __float2half_rn(float x) { return f32_to_f16_rn(x); }
// fmaxf as the device computes it (PTX max.f32): a NaN operand, quiet or signalling, is dropped and
// two NaNs give the canonical NaN. glibc's fmaxf returns a NaN for a signalling operand, so the
// host's would make the kernels' source disagree with their models on the nonfinite profile.
inline float fmaxf(float a, float b) {
    if (std::isnan(a)) return std::isnan(b) ? f32_from_bits(0x7fffffffu) : b;
    if (std::isnan(b)) return a;
    if (a == b) return std::signbit(a) ? b : a;  // +0 over -0
    return a < b ? b : a;
}

struct Block {
    std::barrier<> all;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    std::vector<float> exchange;
    std::vector<float4> smem;
    Block(int threads, size_t smem_bytes) : all(threads), exchange(size_t(threads)), smem(smem_bytes / 16 + 1) {
        for (int w = 0; w < threads / 32; ++w) warps.push_back(std::make_unique<std::barrier<>>(32));
        std::memset(static_cast<void*>(smem.data()), 0xa5, smem.size() * 16);  // stale bytes show up
    }
};
inline Block* current = nullptr;

inline float4* dynamic_smem() { return current->smem.data(); }
inline void __syncthreads() { current->all.arrive_and_wait(); }
// v of lane `src` of this thread's warp.
inline float shfl_from(float v, int src) {
    const int t = threadIdx.x;
    current->exchange[size_t(t)] = v;
    current->warps[size_t(t / 32)]->arrive_and_wait();
    const float r = current->exchange[size_t(t / 32 * 32 + src)];
    current->warps[size_t(t / 32)]->arrive_and_wait();
    return r;
}
inline float __shfl_xor_sync(unsigned, float v, int off) { return shfl_from(v, (threadIdx.x % 32) ^ off); }
inline float __shfl_sync(unsigned, float v, int src) { return shfl_from(v, src % 32); }
inline float __shfl_up_sync(unsigned, float v, int delta) {  // lanes below delta keep their own
    const int lane = threadIdx.x % 32;
    return shfl_from(v, lane >= delta ? lane - delta : lane);
}
inline int __shfl_xor_sync(unsigned mask, int v, int off) {  // an int travels as its bits
    float f;
    std::memcpy(&f, &v, 4);
    f = __shfl_xor_sync(mask, f, off);
    std::memcpy(&v, &f, 4);
    return v;
}

// kernel() over the grid (gx, gy), `threads` threads per block; shared memory starts poisoned.
template <class F>
void launch(int gx, int gy, int threads, size_t smem_bytes, F kernel) {
    for (int by = 0; by < gy; ++by)
        for (int bx = 0; bx < gx; ++bx) {
            Block b(threads, smem_bytes);
            current = &b;
            std::vector<std::thread> ts;
            for (int t = 0; t < threads; ++t)
                ts.emplace_back([&, t] {
                    threadIdx.x = t;
                    blockIdx.x = bx;
                    blockIdx.y = by;
                    kernel();
                });
            for (auto& th : ts) th.join();
            current = nullptr;
        }
}

}  // namespace bitgate::cuda::sim
