// What the attention kernels share (kernels/attention_kernels.cuh gathers them and states the
// order they follow): the defects a mutant switches on, the split and `part` row constants, the
// loop pragmas (none under the CPU simulation), the f16 widening, the max, decode's max, a group's
// head numbering and the decode pass sizes.
#pragma once
#if !defined(BITGATE_CUDA_SIM)
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#include <cstdint>
#include <type_traits>

#include "bitgate/attention_order.hpp"
#include "bitgate/exp.hpp"
#include "cp_async.cuh"
#include "pdl.cuh"

namespace bitgate::cuda::attn {

enum class Bug { none, non_causal, kv_head_mod, skip_last_split, tail_unwritten, read_past_L };

constexpr int kSplit = int(kAttnSplit);
constexpr int kPartPad = 4;       // part rows: acc[D], m, l, 2 unused (16-byte rows)

#if !defined(BITGATE_CUDA_SIM)
#define BITGATE_DYNAMIC_SMEM(name) extern __shared__ float4 name[]
#define BITGATE_UNROLL _Pragma("unroll")
#define BITGATE_UNROLL4 _Pragma("unroll 4")
#define BITGATE_UNROLL8 _Pragma("unroll 8")
#define BITGATE_NO_UNROLL _Pragma("unroll 1")
#else
#include <cstring>
#define BITGATE_UNROLL
#define BITGATE_UNROLL4
#define BITGATE_UNROLL8
#define BITGATE_NO_UNROLL
#endif

__device__ __forceinline__ float h2f(uint32_t bits) { return __half2float(__ushort_as_half(uint16_t(bits))); }

__device__ __forceinline__ void unpack8(const uint4 w, float* f) {
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
    BITGATE_UNROLL
    for (int i = 0; i < 4; ++i) {
        f[2 * i] = h2f(u[i] & 0xffffu);
        f[2 * i + 1] = h2f(u[i] >> 16);
    }
}

// The max of finite values is the same in any order (and a +0/-0 tie changes no later bit:
// exp_det(+-0) = 1), so the kernels reduce it in trees.
__device__ __forceinline__ float max_of(float a, float b) { return a > b ? a : b; }

// The decode kernels' max: the same bits as max_of in one FMNMX, where max_of's ternary is a
// compare and a select (the two differ only on NaN, whose bits are outside the contract:
// docs/attention.md, "Inputs, NaN and infinity"). With it and exp_det_nonpos (exp_det's bits for
// arguments <= 0, 8 instructions shorter) the decode pair was 1-3% faster on an H100 at every
// shape timed but 7B at L = 32768, where it was the same (bench/RESULTS.md, 2026-12-07, third).
// Prefill keeps max_of and exp_det (not timed with them).
__device__ __forceinline__ float decode_max(float a, float b) { return fmaxf(a, b); }

// q head g of kv head kvh's group; Bug::kv_head_mod spreads heads round-robin over kv heads.
template <Bug B>
__device__ __forceinline__ int head_of(int kvh, int g, int G, int n_kv_head) {
    return B == Bug::kv_head_mod ? g * n_kv_head + kvh : kvh * G + g;
}

// Decode: query heads per pass over a split (4, 7 or 8: the group of Qwen2's 0.5B and 7B is 7).
__host__ __device__ inline constexpr int decode_chunk(int G) { return G <= 4 ? 4 : (G % 7 == 0 && G % 8 != 0) ? 7 : 8; }
// p rows of the chunk in shared memory: 4 or 8 floats (16-byte broadcast reads).
__host__ __device__ inline constexpr int decode_prow(int HC) { return HC <= 4 ? 4 : 8; }

}  // namespace bitgate::cuda::attn
