// proj_q8_0 kernels, as templates: kernels/proj_q8_0.cu instantiates the sound ones and
// mutants/proj_q8_0.cu the deliberately defective ones, so a mutant is the real
// kernel with one defect switched on, never a look-alike.
//
// Float order (kernels/include/bitgate/proj_q8_0_order.hpp): W logical threads per row, thread t
// sums blocks t, t+W, ... with acc = fmaf((float)sumi, d_w * d_x, acc), then per logical warp the
// xor tree 16, 8, 4, 2, 1, then warp 0 + warp 1 + ... in order.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "bitgate/formats.hpp"
#include "bitgate/proj_q8_0_order.hpp"
#include "pdl.cuh"
#include "sm_count.cuh"
#include "bitgate/q8_words.hpp"
#include "proj_q8_0.cuh"

namespace bitgate::cuda::proj_q8_0_detail {

// Up to four matrices of one shape that share one activation.
struct Mats {
    const BlockQ8_0* w[4];
    float* y[4];
    int count;
    // The epilogue: y[r] = sum + add[r] with one rounding, or none where add is null. add may be
    // y itself (the residual stream, updated in place): lane 0 reads add[r] before it writes y[r].
    const float* add[4] = {nullptr, nullptr, nullptr, nullptr};
};

// Select by value rather than index the kernel parameter, which would copy it to local memory.
template <class T>
__device__ __forceinline__ T pick(const T (&v)[4], int i) {
    return i == 0 ? v[0] : i == 1 ? v[1] : i == 2 ? v[2] : v[3];
}

// The defects mutants switch on; the real kernels use Sound.
struct Sound {
    static constexpr bool tree_ascending = false;  // xor offsets 1, 2, 4, 8, 16 instead of 16 .. 1
    static constexpr bool store_past_n = false;    // the ragged last CUDA block stores rows >= n
    static constexpr bool add_early = false;       // the epilogue's addend joins lane 0's first partial sum
};

template <class Defect>
__device__ __forceinline__ float warp_tree(float v) {
    if constexpr (Defect::tree_ascending) {
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) v = v + __shfl_xor_sync(0xffffffffu, v, off);
    } else {
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v = v + __shfl_xor_sync(0xffffffffu, v, off);
    }
    return v;
}

__device__ __forceinline__ float f16_bits_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// ---------------------------------------------------------------------------------------------
// v1: the plain kernel. 128 threads, one row per CUDA block, byte loads, scalar integer MACs.

template <class Defect>
__global__ void __launch_bounds__(128) proj_v1_kernel(const BlockQ8_0* __restrict__ w, const BlockQ8_0* __restrict__ xq,
                                                      float* __restrict__ y, int64_t bpr) {
    const int64_t row = blockIdx.x;
    const int t = threadIdx.x;
    const BlockQ8_0* wr = w + row * bpr;
    float acc = 0.0f;
    for (int64_t b = t; b < bpr; b += 128) {
        int sumi = 0;
        for (int j = 0; j < QK8_0; ++j) sumi += int(wr[b].qs[j]) * int(xq[b].qs[j]);
        const float d = f16_bits_to_f32(wr[b].d) * f16_bits_to_f32(xq[b].d);
        acc = fmaf(float(sumi), d, acc);
    }
    acc = warp_tree<Defect>(acc);
    __shared__ float warp_sum[4];
    if (t % 32 == 0) warp_sum[t / 32] = acc;
    __syncthreads();
    if (t == 0) y[row] = ((warp_sum[0] + warp_sum[1]) + warp_sum[2]) + warp_sum[3];
}

template <class Defect>
void launch_v1(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t bpr, cudaStream_t stream) {
    proj_v1_kernel<Defect><<<unsigned(n), 128, 0, stream>>>(w, xq, y, bpr);
}

// ---------------------------------------------------------------------------------------------
// v2 (and fused4: the same kernel with four matrices).
//
// One warp per row. The warp carries the row's NW = W/32 logical warps as NW accumulators per
// lane: lane l is logical threads l, l+32, ..., so the per-thread order, the per-logical-warp
// xor tree and the cross-warp order are the model's, and the cross-warp sum needs neither shared
// memory nor a barrier. Rows (tasks) are dealt to warps round-robin over a grid sized to the
// machine; warps are numbered warp-major so that the rows left over spread across SMs.
//
// The activation is read once per CUDA block into shared memory as aligned words: per block 8 qs
// words and d_x as f32, a stride of 9 words so that 32 lanes hit 32 banks.
//
// Weights, two ways to the same bytes:
// - direct: each lane rebuilds its block's words with get_int_b2 (two aligned 16-bit loads),
//   for any alignment.
// - staged (every matrix 16-byte aligned and bpr % 8 == 0, which is every real model but k=896):
//   a round of W consecutive blocks of a row is W*34 bytes starting at a multiple of 16 bytes, so
//   one lane copies it into shared memory with a single bulk copy (the TMA engine, completion on
//   an mbarrier), and each lane rebuilds its block from aligned 32-bit shared words
//   (q8_0_block_words).
//
// The staged pipeline runs across rows: a warp's tasks, in the order it takes them, are one stream
// of (task, round) chunks, and S chunks are in flight whether they belong to this row or the
// next ones. A row of k=7168 is only 2 rounds, so a pipeline within one row would expose a DRAM
// latency per row. Rounds of one row are still consumed in ascending order, each lane summing
// blocks t, t+W, ..., so the float order is the model's.
//
// Shared memory: S mbarriers per warp, the activation, then S stages per warp. S = 0 is the
// direct path (no stages).
//
// How many stages and rows per CUDA block: the consumers, not the copies in flight, bound this
// kernel (with 5 stages and 4 rows a block, 8 warps an SM, Nsight Compute showed 0.35
// instructions issued per scheduler cycle, 65% of cycles with no eligible warp and DRAM at half
// its peak), so the dispatch spends shared memory on warps: 8 rows a block and 2 stages of W
// blocks (3 where a row is one round), 16 to 24 warps an SM, were the fastest of the
// combinations measured on the H200 at the catalog's shapes, up to 20% faster than 5 stages and
// 4 rows (bench/RESULTS.md, 2026-12-01, night). A second sweep (2026-12-02, same method) moved
// two rules, see v2_rows and v2_early_stages.
constexpr int kActWords = 9;
constexpr int kActBatch = 4;
constexpr int kMaxRowsPerBlock = 16;  // the kernel's launch bounds: the most v2_rows gives

// Rows (warps) a CUDA block, by shape (scheduling only: a row's order is the same in any block).
// 8, since the activation is staged once per block: with a row a block, n = 896 staged 5 MB of
// activation beside 4.6 MB of weights (896 x 4864: 4.29 -> 3.04 us back to back with 8 rows,
// 512 x 3584: 2.92 -> 2.32, 96 x 7168: 3.74 -> 2.96). 16 for n >= 1024 and rows of 448 to 1024
// blocks (k = 14336 .. 32768): the activation is then 16 KB or more a block and one 16-row block
// an SM keeps as many warps as two of 8 (4096 x 14336: 18.24 -> 17.06 us, 3584 x 18944: 20.62 ->
// 20.08); shorter rows measured slower with 16 (12288 x 7168: 24.88 -> 25.74).
constexpr int v2_rows(int64_t n, int64_t bpr) { return n >= 1024 && bpr >= 448 && bpr <= 1024 ? 16 : 8; }

// Weight stages issued before the block stages the activation: all of them once n >= 1024; one
// below, where a call is a few microseconds and the activation's L2 reads queued behind every
// warp's first copies (issuing none first was slower still: 512 x 3584 3.05 us against 2.32).
constexpr int v2_early_stages(int64_t n, int stages) { return n >= 1024 ? stages : stages > 0 ? 1 : 0; }

constexpr int v2_stages(int64_t bpr) { return bpr <= 128 ? 3 : 2; }

__host__ __device__ constexpr int stage_bytes(int nw) { return nw * 32 * int(sizeof(BlockQ8_0)) + 16; }

__host__ __device__ constexpr size_t act_bytes(int64_t bpr) { return (size_t(bpr) * kActWords * 4 + 15) / 16 * 16; }

__host__ __device__ constexpr size_t barrier_bytes(int rows, int stages) { return (size_t(rows) * stages * 8 + 15) / 16 * 16; }

constexpr size_t v2_smem_bytes(int64_t bpr, int nw, int stages, int rows) {
    return stages > 0 ? barrier_bytes(rows, stages) + act_bytes(bpr) + size_t(rows) * stages * stage_bytes(nw) : act_bytes(bpr);
}

// 8 rows a block fit sm_90's 227 KiB of shared memory a block at the specs' longest rows
// (k = 131072: 147 KB of activation and 68 KB of stages), so no shape needs fewer; 16 rows fit
// at the longest rows that take them (k = 32768: 37 KB and 140 KB).
static_assert(v2_smem_bytes(131072 / 32, 4, v2_stages(131072 / 32), 8) <= 227 * 1024,
              "8 rows a block must fit at k = 131072");
static_assert(v2_rows(1024, 1025) == 8 && v2_rows(1024, 1024) == 16 &&
                  v2_smem_bytes(1024, 4, v2_stages(1024), 16) <= 227 * 1024,
              "16 rows a block must fit at the longest rows that take them");

__device__ __forceinline__ unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// One bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) that completes the
// barrier's current phase when it lands.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// acc = fmaf((float)sumi, d_w * d_x, acc) for one weight block against activation block `xa`.
__device__ __forceinline__ float accumulate(const Q8Words& wq, const uint32_t* xa, float acc) {
    int sumi = 0;
#pragma unroll
    for (int j = 0; j < QK8_0 / 4; ++j) sumi = dp4a(wq.qs[j], int(xa[j]), sumi);
    const float d = f16_bits_to_f32(wq.d) * __uint_as_float(xa[8]);
    return fmaf(float(sumi), d, acc);
}

// The row's sum, then the epilogue (docs/proj_q8_0_add.md): the addend after the whole sum, one
// __fadd_rn, the same single rounding as the separate add kernel's y = sum + a.
template <class Defect>
__device__ __forceinline__ void finish_row(const Mats& m, int64_t q, const float (&acc)[4], int nw, int lane) {
    const int i = int(q % m.count);
    const int64_t row = q / m.count;
    const float* add = pick(m.add, i);
    float first = acc[0];
    if constexpr (Defect::add_early) {
        if (add && lane == 0) first = first + add[row];
    }
    float total = warp_tree<Defect>(first);
    for (int lw = 1; lw < nw; ++lw) total = total + warp_tree<Defect>(acc[lw]);
    if (lane == 0) {
        if (add && !Defect::add_early) total = __fadd_rn(total, add[row]);
        pick(m.y, i)[row] = total;
    }
}

// A position in a warp's chunk stream: its i-th task (task q = gw + i * nwarps) and a round.
struct Cursor {
    int64_t i = 0;
    int round = 0;
    __device__ void next(int rounds) {
        if (++round == rounds) round = 0, ++i;
    }
};

template <int NW, int S, class Defect, int EARLY = S>  // EARLY: v2_early_stages
__global__ void __launch_bounds__(kMaxRowsPerBlock * 32) proj_v2_kernel(Mats m, const BlockQ8_0* __restrict__ xq, int64_t n, int bpr) {
    constexpr int W = NW * 32;
    constexpr int SB = stage_bytes(NW);
    constexpr bool kStaged = S > 0;
    extern __shared__ __align__(16) unsigned char smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, rows = blockDim.x / 32;
    const size_t bar_bytes = kStaged ? barrier_bytes(rows, S) : 0;
    uint32_t* act = reinterpret_cast<uint32_t*>(smem + bar_bytes);
    const int64_t nwarps = int64_t(gridDim.x) * rows;
    const int64_t gw = int64_t(warp) * gridDim.x + blockIdx.x;

    // Task q: matrix q % count, row q / count. The defect runs the tail up to a multiple of 4
    // rows, reading the last real row but storing past n.
    const int64_t ntasks = Defect::store_past_n ? (n + 3) / 4 * 4 * m.count : n * m.count;
    const int64_t my_tasks = gw < ntasks ? (ntasks - 1 - gw) / nwarps + 1 : 0;
    const int rounds = (bpr + W - 1) / W;
    auto weights_row = [&](int64_t q) {
        const int64_t row = Defect::store_past_n ? min(q / m.count, n - 1) : q / m.count;
        return pick(m.w, int(q % m.count)) + row * bpr;
    };

    uint64_t* bars = reinterpret_cast<uint64_t*>(smem) + warp * S;
    unsigned char* stages = smem + bar_bytes + act_bytes(bpr) + size_t(warp) * S * SB;
    Cursor fill;    // the next chunk to copy
    int fill_slot = 0;
    auto issue = [&]() {  // lane 0 only
        if (fill.i < my_tasks) {
            const int b0 = fill.round * W;
            const unsigned bytes = unsigned(min(W, bpr - b0)) * unsigned(sizeof(BlockQ8_0));
            bulk_copy(stages + fill_slot * SB, weights_row(gw + fill.i * nwarps) + b0, bytes, bars + fill_slot);
            fill.next(rounds);
        }
        fill_slot = fill_slot + 1 == S ? 0 : fill_slot + 1;
    };
    if constexpr (kStaged) {
        if (lane == 0) {
            for (int s = 0; s < S; ++s) mbar_init(bars + s);
            mbar_init_fence();
            for (int s = 0; s < EARLY; ++s) issue();  // in flight while the activation loads
        }
    }

    // Launched as dependent (kernels/pdl.cuh): up to here the kernel has read nothing and, staged,
    // only started copies of its weights, which no kernel of a decode step writes (callers load
    // them once); the activation xq below is the output of the kernel before it (the quantize, or
    // the hoist), and y is written after it, so the wait goes here. Then the next projection may
    // start: it too waits before touching xq or y. Only when the work starts moves, never what is
    // summed or in which order: each output's reduction (blocks t, t+W, ... per lane, the xor
    // tree, warps in order) is the one above and in proj_q8_0_order.hpp, so the bytes are v2's.
    wait_then_allow_dependents();

    // The activation, kActBatch blocks per thread at a time: all their loads are in flight
    // before the first store, so a long row costs a couple of round trips, not one per block.
    for (int b0 = threadIdx.x; b0 < bpr; b0 += kActBatch * blockDim.x) {
        uint32_t v[kActBatch][kActWords];
#pragma unroll
        for (int i = 0; i < kActBatch; ++i) {
            const int b = b0 + i * int(blockDim.x);
            if (b < bpr) {
#pragma unroll
                for (int j = 0; j < QK8_0 / 4; ++j) v[i][j] = uint32_t(get_int_b2(xq[b].qs, j));
                v[i][8] = __float_as_uint(f16_bits_to_f32(xq[b].d));
            }
        }
#pragma unroll
        for (int i = 0; i < kActBatch; ++i) {
            const int b = b0 + i * int(blockDim.x);
            if (b < bpr) {
#pragma unroll
                for (int j = 0; j < kActWords; ++j) act[b * kActWords + j] = v[i][j];
            }
        }
    }
    __syncthreads();  // the only block-wide barrier (it also publishes the mbarrier inits)
    if constexpr (kStaged && EARLY < S) {
        if (lane == 0)
            for (int s = EARLY; s < S; ++s) issue();  // the stages left: every slot has one copy in flight
    }

    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // +0.0f: see proj_q8_0_order.hpp
    if constexpr (kStaged) {
        Cursor use;  // the chunk being consumed
        int slot = 0;
        unsigned parity = 0;  // phase of the slot's barrier: flips every S chunks
        for (; use.i < my_tasks; use.next(rounds)) {
            mbar_wait(bars + slot, parity);
            const uint32_t* st = reinterpret_cast<const uint32_t*>(stages + slot * SB);
#pragma unroll
            for (int lw = 0; lw < NW; ++lw) {
                const int t = lw * 32 + lane, b = use.round * W + t;
                if (b < bpr) acc[lw] = accumulate(q8_0_block_words(st, uint32_t(t) * sizeof(BlockQ8_0)), act + b * kActWords, acc[lw]);
            }
            __syncwarp();  // every lane has read the stage before it is refilled
            if (lane == 0) issue();
            if (use.round == rounds - 1) {
                finish_row<Defect>(m, gw + use.i * nwarps, acc, NW, lane);
#pragma unroll
                for (int lw = 0; lw < 4; ++lw) acc[lw] = 0.0f;
            }
            if (++slot == S) slot = 0, parity ^= 1u;
        }
    } else {
        for (int64_t i = 0; i < my_tasks; ++i) {
            const int64_t q = gw + i * nwarps;
            const BlockQ8_0* wr = weights_row(q);
            for (int b0 = 0; b0 < bpr; b0 += W) {
#pragma unroll
                for (int lw = 0; lw < NW; ++lw) {
                    const int b = b0 + lw * 32 + lane;
                    if (b < bpr) {
                        Q8Words wq;
                        wq.d = wr[b].d;
#pragma unroll
                        for (int j = 0; j < QK8_0 / 4; ++j) wq.qs[j] = get_int_b2(wr[b].qs, j);
                        acc[lw] = accumulate(wq, act + b * kActWords, acc[lw]);
                    }
                }
            }
            finish_row<Defect>(m, q, acc, NW, lane);
#pragma unroll
            for (int lw = 0; lw < 4; ++lw) acc[lw] = 0.0f;
        }
    }
}

// Through the shared SM count (kernels/sm_count.cuh), so an override reaches this dispatch.
inline int device_sm_count() { return sm_count(); }

// Resident CUDA blocks per SM for one kernel at one block size and shared-memory size (cached:
// the launchers are called in timing loops). Keyed by the kernel's address: every instantiation
// has the same type.
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads, size_t smem) {
    static std::mutex mu;
    static std::map<std::tuple<const void*, int, size_t>, int> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto [it, fresh] = cache.try_emplace({reinterpret_cast<const void*>(kernel), threads, smem}, 0);
    if (fresh) {
        int dev = 0, optin = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&it->second, kernel, threads, smem);
        if (it->second < 1) it->second = 1;  // the launch then reports why it cannot run
    }
    return it->second;
}

template <int NW, int S, class Defect>
void launch_v2_as(const Mats& m, const BlockQ8_0* xq, int64_t n, int64_t bpr, cudaStream_t stream) {
    static_assert(S == 0 || v2_early_stages(1, S) == 1, "the early stages below 1024 rows");
    auto kernel = v2_early_stages(n, S) == S ? proj_v2_kernel<NW, S, Defect> : proj_v2_kernel<NW, S, Defect, 1>;
    const int rows = v2_rows(n, bpr);
    const size_t smem = v2_smem_bytes(bpr, NW, S, rows);
    const int64_t blocks = (n * m.count + rows - 1) / rows;
    const int64_t resident = int64_t(blocks_per_sm(kernel, rows * 32, smem)) * device_sm_count();
    launch_dependent(kernel, unsigned(std::min(blocks, resident)), unsigned(rows * 32), smem, stream, m, xq, n, int(bpr));
}

// How the weights reach the lanes; automatic picks staged wherever it is allowed.
using Path = ProjQ8Path;  // one enum: kernels/proj_q8_0.cuh

inline bool staged_ok(const Mats& m, int64_t bpr) {
    if (bpr % 8 != 0) return false;
    for (int i = 0; i < m.count; ++i)
        if (reinterpret_cast<uintptr_t>(m.w[i]) % 16 != 0) return false;
    return true;
}

// One launch with an explicit width (32, 64 or 128); the sound launcher passes v2's.
template <class Defect>
void launch_v2(const Mats& m, const BlockQ8_0* xq, int64_t n, int64_t bpr, int width, cudaStream_t stream,
               Path path = Path::automatic) {
    const bool staged = path != Path::direct && staged_ok(m, bpr);  // staged only where it is allowed
    const int stages = staged ? v2_stages(bpr) : 0;
    // Widths 32 and 64 mean bpr <= 64, where v2_stages is 3: only width 128 instantiates 2 stages.
    static_assert(v2_stages(32) == 3 && v2_stages(64) == 3, "the narrow widths' stage count");
    switch (width) {
        case 32: return stages ? launch_v2_as<1, 3, Defect>(m, xq, n, bpr, stream) : launch_v2_as<1, 0, Defect>(m, xq, n, bpr, stream);
        case 64: return stages ? launch_v2_as<2, 3, Defect>(m, xq, n, bpr, stream) : launch_v2_as<2, 0, Defect>(m, xq, n, bpr, stream);
        default:
            if (stages == 0) return launch_v2_as<4, 0, Defect>(m, xq, n, bpr, stream);
            if (stages == 2) return launch_v2_as<4, 2, Defect>(m, xq, n, bpr, stream);
            return launch_v2_as<4, 3, Defect>(m, xq, n, bpr, stream);
    }
}

}  // namespace bitgate::cuda::proj_q8_0_detail
