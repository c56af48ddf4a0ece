// The attention kernels, templated on head_dim and on a defect (Bug::none in kernels/attention.cu;
// the others only in mutants/attention.cu). The order they follow is the host
// model's (refimpl/attention.hpp, docs/attention.md):
//   s_j   = (fma chain over d ascending from +0 of q[d] * k_j[d]) * scale
//   split = keys [128 c, 128 c + 128) up to the query's position: m = max, p = exp_det(s - m),
//           l = p summed in key order from +0, acc[d] = fma chain of p_j * v_j[d] in key order
//   fold  = splits in position order: M' = max(M, m), a = exp_det(M - M'), b = exp_det(m - M'),
//           Ls = fma(Ls, a, l * b), A = fma(A, a, acc * b); split 0 starts the state; out = A / Ls
// Masked keys inside a tile enter as p = 0: l + 0 and fma(0, v, acc) change no bit (v finite).
// Every multiply-add is an explicit fmaf (the build has -fmad=false); exp is exp_det, no
// hardware approximation; no atomics; nothing depends on the grid beyond the shape.
//
// tests/attention_sim_test.cpp compiles this file for the CPU, with the CUDA features it uses
// emulated (tests/cuda_sim.hpp): plain C++ in the kernels, nothing else from CUDA.
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
constexpr int kCombineThreads = 256;
constexpr int kCombineDims = 32;  // dims per combine block
constexpr int kPartPad = 4;       // part rows: acc[D], m, l, 2 unused (16-byte rows)
constexpr int kBQ = 64, kBK = 64, kPrefillThreads = 256;

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

// q head g of kv head kvh's group; Bug::kv_head_mod spreads heads round-robin over kv heads.
template <Bug B>
__device__ __forceinline__ int head_of(int kvh, int g, int G, int n_kv_head) {
    return B == Bug::kv_head_mod ? g * n_kv_head + kvh : kvh * G + g;
}

// Decode: query heads per pass over a split (4, 7 or 8: the group of Qwen2's 0.5B and 7B is 7).
__host__ __device__ inline constexpr int decode_chunk(int G) { return G <= 4 ? 4 : (G % 7 == 0 && G % 8 != 0) ? 7 : 8; }
// p rows of the chunk in shared memory: 4 or 8 floats (16-byte broadcast reads).
__host__ __device__ inline constexpr int decode_prow(int HC) { return HC <= 4 ? 4 : 8; }

// ---- decode, the split kernel: one block a split, its rows brought in by cp.async --------------

constexpr int kStageBytes = 8192;  // a stage: 4 words of every K row of a split, or a run of V rows
constexpr int kStageSlots = 2;     // the ring: one stage in flight while the other is read

// Threads of a split block, by shape only (every choice follows the one order: it moves no bit).
// 128, one key a thread, at head_dim 128 for caches of up to 128 (split, kv head) pairs: a block
// an SM at most (on the H200's 132), which leaves the kernel bound by latency, and halving each
// thread's chains pays. 64, two keys a thread, otherwise: once blocks share SMs the kernel is
// bound by issue, and each broadcast read of q serving two keys counts. Measured on the H200
// (bench/RESULTS.md, 2026-12-04, fifth), group 7, each alone, 128 threads against 64: head_dim 128,
// 32 / 64 / 128 pairs 6.8 / 7.4 / 7.8 us against 8.5 / 9.0 / 9.2 (the pipelined kernel, which took
// them before: 9.0 / 9.2 / 10.0); 160 / 188 / 219 / 256 pairs 10.1 / 10.2 / 10.7 / 10.7 against
// 9.3 / 9.5 / 10.0 / 10.4; 1,024 pairs 31.6 against 24.4 (held to 64 registers, so that all 1,024
// blocks are resident, 44.0 against 37.0 for the pair on an H100: 2026-12-05, fifth); head_dim 64
// slower with 128 threads at every length tried (so the pipelined kernel keeps the short caches there).
inline int decode_split_threads(int64_t n_split, int64_t n_kv_head, int64_t head_dim) {
    return head_dim >= 128 && n_split * n_kv_head <= 128 ? 128 : 64;
}

// f(std::integral_constant<int, T>) for a block size T of 64, or 128 at head_dim 128: the one
// place that turns the size into the template argument, for the launcher and the CPU test alike.
template <int D, class F>
void with_split_threads(int threads, F&& f) {
    if constexpr (D >= 128) {
        if (threads == 128) {
            f(std::integral_constant<int, 128>{});
            return;
        }
    }
    f(std::integral_constant<int, 64>{});
}

template <int D, int T>
struct SplitStages {
    static constexpr int W = D / 8;                          // 16-byte words per row
    static constexpr int KW = kStageBytes / (kSplit * 16);   // words of every K row in a stage: 4
    static constexpr int KSTAGES = W / KW;                   // 4 at head_dim 128, 2 at 64
    static constexpr int VK = kStageBytes / (2 * D);         // V rows in a stage: 32 at 128, 64 at 64
    static constexpr int VSTAGES = kSplit / VK;
    static constexpr int STAGES = KSTAGES + VSTAGES;
    static constexpr int COPIES = kStageBytes / 16 / T;      // 16-byte copies a thread a stage
    static constexpr int RPL = 8 / KW;                       // K rows a 128-byte line holds
    static constexpr int KPT = kSplit / T;                   // keys a thread owns in the scores
    static constexpr int DPT = D / T;                        // dims a thread owns in p.v
    static_assert(kSplit * KW * 16 == kStageBytes && VK * D * 2 == kStageBytes, "stages are whole");
    static_assert((T == 64 || T == 128) && (DPT == 1 || DPT == 2), "64 threads, or 128 at head_dim 128");
};

inline size_t decode_smem_bytes(int D, int G, int T) {
    const int HC = decode_chunk(G), PR = decode_prow(HC);
    return size_t(kStageSlots) * kStageBytes + size_t(HC * D + kSplit * PR + (T / 32) * HC + HC) * 4;
}

// Decode, one block of T threads (decode_split_threads) per (split c = blockIdx.x, kv head =
// blockIdx.y), serving the query heads of the kv head in passes of HC so that K and V are read
// from memory once (for G <= HC). The blocks are small (24 KiB of shared memory, 128 registers a
// thread) so that all of a long cache's blocks are resident together (8 of 64 threads per SM: the
// 1,024 of the 7B shape at L = 32768 in one wave). A split's rows reach shared memory by cp.async
// through a ring of two 8 KiB slots: 4 K stages (words 4s .. 4s + 3 of its 128 rows; 2 at
// head_dim 64), then 4 V stages (32 rows each; 2 of 64 at head_dim 64), each issued two stages
// ahead, so that V's first two stages are in flight during the last scores and the max. A warp's
// copy covers 8 rows x 64 bytes (K) or 512 contiguous bytes (V). Before, each thread loaded its
// own K rows into registers: a warp's 16-byte load then touched 32 lines, L1 was the busiest unit
// (76%) and only 16 V keys a thread fitted in flight (bench/RESULTS.md, 2026-12-04).
//  - scores: thread t owns keys t + k T (k < 128 / T); K words sit XOR-swizzled by row pair
//    ((row >> 1) & 3), so the 8 rows a quarter warp reads sit in distinct banks; q comes from
//    shared memory as broadcast reads shared by the thread's keys; each score is one sequential
//    fma chain over d, the stages in d order.
//  - max per head: warp trees, then the warps through shared memory; p = exp_det(s - m) to
//    shared memory as rows [key][head].
//  - p.v: every thread, owning dims D/T t .. D/T t + D/T - 1 of every head of the pass, V (a warp
//    reads 128 or 64 contiguous bytes a key) and p (broadcast rows) from shared memory; one fma
//    chain per (head, dim) in key order, the stages in key order. (Until 2026-12-04, fifth, at
//    head_dim 64 half the threads owned two dims each and the other warp idled: 7-19% slower.)
//  - l: one thread per head sums p in key order (the last warp's lanes, inside the p.v loop).
// One split's (acc, m, l) per head goes to part, or for a single split out = acc / l.
template <int D, int HC, int T, Bug B>
__global__ void __launch_bounds__(T, 512 / T)
    decode_split_kernel(const float* __restrict__ q, const uint16_t* __restrict__ kc, const uint16_t* __restrict__ vc,
                        int64_t L, int64_t ctx, int n_kv_head, int G, float scale, int n_split,
                        float* __restrict__ part, float* __restrict__ out) {
    using Geo = SplitStages<D, T>;
    constexpr int PR = decode_prow(HC), NW = T / 32, KPT = Geo::KPT, DPT = Geo::DPT;
    BITGATE_DYNAMIC_SMEM(smem4);
    uint8_t* ring = reinterpret_cast<uint8_t*>(smem4);                       // [kStageSlots][kStageBytes]
    float* sq = reinterpret_cast<float*>(ring + kStageSlots * kStageBytes);  // [HC][D]: the pass's queries
    float* sp = sq + HC * D;                                                  // [kSplit][PR]: p
    float* smax = sp + kSplit * PR;                                           // [NW][HC]: each warp's max
    float* sl = smax + NW * HC;                                               // [HC]: l
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int kvh = blockIdx.y, c = blockIdx.x;
    const int64_t j0 = int64_t(c) * kSplit;
    allow_dependents();  // the combine may be scheduled now; it waits for this grid before reading part
    const int64_t limit = B == Bug::read_past_L ? ctx : L;  // the defect reads the poison after L
    const int nk = int(min(int64_t(kSplit), limit - j0));
    const uint16_t* const kbase = kc + (int64_t(kvh) * ctx + j0) * D;
    const uint16_t* const vbase = vc + (int64_t(kvh) * ctx + j0) * D;
    // This thread's copies of a stage: word kw of K rows kr + k KSTEP, word vw of V rows
    // vr + k VSTEP (k < COPIES), so that in a full split every copy is a fixed offset from one
    // source and one destination address (the copies' address arithmetic was about 13% of
    // the kernel's instructions). The swizzle of rows kr + k KSTEP is row kr's.
    constexpr int KSTEP = T / Geo::KW, VSTEP = T / Geo::W;
    static_assert(KSTEP % (Geo::RPL * Geo::KW) == 0, "a thread's K rows share their swizzle");
    const int kr = t / Geo::KW, kw = t % Geo::KW, vr = t / Geo::W, vw = t % Geo::W;
    const int kdst = kr * (Geo::KW * 16) + 16 * (kw ^ ((kr / Geo::RPL) % Geo::KW)), vdst = vr * (D * 2) + 16 * vw;
    const bool full = nk == kSplit;
    // At head_dim 128 the copies mark the cache's lines evict-first in L2 (the rows are read once,
    // and left to the usual policy they push out lines still in use) and have L2 fetch whole
    // 128-byte lines (a K stage copies 64 bytes of each row, the next stage the line's other
    // half). On an H100, 7B, L = 32768, the pair took 36.9 us with neither, 34.8 with the policy,
    // 33.8 with both; L = 16384 20.3, 19.6, 18.6 (bench/RESULTS.md, 2026-12-05, fifth); on the H200
    // both took it from 28.7 to 28.1 us (2026-12-05, sixth). Half the line (64 bytes) or twice it
    // on the first K stage, and the V rows prefetched into L2 early, were slower (sixth). Not at
    // head_dim 64: the policy gained nothing at 0.5B on either card, and there nvcc 13.0 compiled
    // the hinted V copy to an illegal instruction; there the copies only fetch whole lines (0.5B,
    // L = 32768: 14.5-14.6 us against 15.0 on an H100, bench/RESULTS.md 2026-12-05, fifth; 14.0
    // against 15.1 on the H200, sixth). Scheduling only: no bit depends on it.
    constexpr bool kStream = D == 128;
    uint64_t policy = 0;
    if constexpr (kStream) policy = l2_evict_first_policy();
    auto copy16 = [&](uint8_t* dst, const uint16_t* src) {
        if constexpr (kStream)
            cp_async16_stream(dst, src, policy);
        else
            cp_async16_line(dst, src);
    };
    // Stage s into slot s % 2, then one commit group (empty past the last stage). In the last
    // split, rows past nk copy row nk - 1 (in bounds, never used).
    auto issue = [&](int s) {
        if (s < Geo::STAGES) {
            uint8_t* const slot = ring + (s % kStageSlots) * kStageBytes;
            // Rows r0 + k RSTEP of src, into dst + k DSTEP (strides known at compile time).
            auto copy = [&](auto rstep, auto dstep, uint8_t* dst, const uint16_t* src, int r0) {
                if (full) {
                    const uint16_t* const row0 = src + int64_t(r0) * D;
                    BITGATE_UNROLL
                    for (int k = 0; k < Geo::COPIES; ++k)
                        copy16(dst + k * decltype(dstep)::value, row0 + k * decltype(rstep)::value * D);
                } else {
                    BITGATE_UNROLL
                    for (int k = 0; k < Geo::COPIES; ++k)
                        copy16(dst + k * decltype(dstep)::value,
                               src + int64_t(min(r0 + k * decltype(rstep)::value, nk - 1)) * D);
                }
            };
            if (s < Geo::KSTAGES)
                copy(std::integral_constant<int, KSTEP>{}, std::integral_constant<int, KSTEP * Geo::KW * 16>{},
                     slot + kdst, kbase + s * Geo::KW * 8 + kw * 8, kr);
            else
                copy(std::integral_constant<int, VSTEP>{}, std::integral_constant<int, VSTEP * D * 2>{}, slot + vdst,
                     vbase + vw * 8, (s - Geo::KSTAGES) * Geo::VK + vr);
        }
        cp_async_commit();  // an empty group past the last stage keeps the waits' count uniform
    };

    for (int g0 = 0; g0 < G; g0 += HC) {
        const int hc = min(HC, G - g0);
        __syncthreads();  // the previous pass's readers of the ring, sq and sp are done
        // The pass's queries, into sq. With 128 threads (short caches, a block an SM at most) they
        // are asked for before the first stages, so that they do not queue behind the copies
        // (3.5% at 7B, L = 4096 on the H200, 3% on an H100); with 64 threads, every block of a long
        // cache resident at once, after them (first, they lost 5% at L = 32768 on the H200).
        // Where they follow the copies, head_dim 64 gathers a thread's words into registers
        // before storing any (2% at 0.5B, L = 32768, both cards) and head_dim 128 stores each as it
        // comes (gathered, 7B at L = 32768 lost 1% on an H100): bench/RESULTS.md, 2026-12-05,
        // second to fourth. No bit depends on the order.
        constexpr bool kQFirst = T == 128, kGather = kQFirst || D == 64;
        constexpr int QPT = (HC * (D / 4) + T - 1) / T;  // 16-byte words of q a thread
        auto q_word = [&](int i) {
            const int g = i / (D / 4), w = i % (D / 4);
            if (g >= hc) return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            return __ldg(reinterpret_cast<const float4*>(q + head_of<B>(kvh, g0 + g, G, n_kv_head) * D) + w);
        };
        float4 qv[QPT];
        if constexpr (kQFirst) {
            BITGATE_UNROLL
            for (int k = 0; k < QPT; ++k) qv[k] = q_word(t + k * T);
        }
        BITGATE_UNROLL
        for (int s = 0; s < kStageSlots; ++s) issue(s);
        if constexpr (kGather) {
            if constexpr (!kQFirst) {
                BITGATE_UNROLL
                for (int k = 0; k < QPT; ++k) qv[k] = q_word(t + k * T);
            }
            BITGATE_UNROLL
            for (int k = 0; k < QPT; ++k)
                if (t + k * T < HC * (D / 4)) reinterpret_cast<float4*>(sq)[t + k * T] = qv[k];
        } else {
            for (int i = t; i < HC * (D / 4); i += T) reinterpret_cast<float4*>(sq)[i] = q_word(i);
        }

        float sc[KPT][HC];  // the scores of keys t + k T
        BITGATE_UNROLL
        for (int k = 0; k < KPT; ++k)
            BITGATE_UNROLL
            for (int g = 0; g < HC; ++g) sc[k][g] = 0.0f;
        const float4* sq4 = reinterpret_cast<const float4*>(sq);
        const int sw = (t / Geo::RPL) % Geo::KW;  // rows t + k T share their swizzle
        BITGATE_NO_UNROLL
        for (int s = 0; s < Geo::KSTAGES; ++s) {
            cp_async_wait<kStageSlots - 1>();  // stage s landed (this thread's copies) ...
            __syncthreads();                    // ... and everyone's (and sq, at s = 0)
            const uint4* ka = reinterpret_cast<const uint4*>(ring + (s % kStageSlots) * kStageBytes) + t * Geo::KW;
            BITGATE_UNROLL
            for (int w = 0; w < Geo::KW; ++w) {
                float f[KPT][8];
                BITGATE_UNROLL
                for (int k = 0; k < KPT; ++k) unpack8(ka[k * T * Geo::KW + (w ^ sw)], f[k]);
                const int qw = 2 * (s * Geo::KW + w);
                BITGATE_UNROLL
                for (int g = 0; g < HC; ++g) {
                    const float4 qa = sq4[g * (D / 4) + qw], qb = sq4[g * (D / 4) + qw + 1];
                    const float qv[8] = {qa.x, qa.y, qa.z, qa.w, qb.x, qb.y, qb.z, qb.w};
                    BITGATE_UNROLL
                    for (int e = 0; e < 8; ++e)
                        BITGATE_UNROLL
                        for (int k = 0; k < KPT; ++k) sc[k][g] = fmaf(qv[e], f[k][e], sc[k][g]);
                }
            }
            __syncthreads();  // every thread is done with the slot
            issue(s + kStageSlots);
        }
        bool valid[KPT];
        BITGATE_UNROLL
        for (int k = 0; k < KPT; ++k) valid[k] = t + k * T < nk;
        BITGATE_UNROLL
        for (int g = 0; g < HC; ++g) {
            BITGATE_UNROLL
            for (int k = 0; k < KPT; ++k) sc[k][g] = valid[k] ? sc[k][g] * scale : -INFINITY;
            float m = sc[0][g];
            BITGATE_UNROLL
            for (int k = 1; k < KPT; ++k) m = max_of(m, sc[k][g]);
            BITGATE_UNROLL
            for (int off = 16; off > 0; off >>= 1) m = max_of(m, __shfl_xor_sync(0xffffffffu, m, off));
            if (lane == 0) smax[warp * HC + g] = m;
        }
        __syncthreads();
        // The split's max of head g, over the warps' maxima.
        auto split_max = [&](int g) {
            float m = smax[g];
            BITGATE_UNROLL
            for (int w = 1; w < NW; ++w) m = max_of(m, smax[w * HC + g]);
            return m;
        };
        {  // a key's p row as 16-byte stores (scalar ones, 32 bytes apart, met 8-way bank conflicts)
            float mh[PR];
            BITGATE_UNROLL
            for (int g = 0; g < PR; ++g) mh[g] = g < HC ? split_max(g) : 0.0f;
            BITGATE_UNROLL
            for (int k = 0; k < KPT; ++k) {
                // Every thread computes both keys' p, valid or not (a key past the split's end has
                // s = -inf, so p = +0, and its row is not stored): a condition here made each
                // exp_det a branch of its own, and the 14 of a thread ran one after another.
                float pk[PR];
                BITGATE_UNROLL
                for (int g = 0; g < PR; ++g) pk[g] = g < HC ? exp_det(sc[k][g] - mh[g]) : 0.0f;
                BITGATE_UNROLL
                for (int r = 0; r < PR; r += 4)
                    if (valid[k])
                        *reinterpret_cast<float4*>(sp + (t + k * T) * PR + r) =
                            make_float4(pk[r], pk[r + 1], pk[r + 2], pk[r + 3]);
            }
        }

        using VWord = std::conditional_t<DPT == 2, uint32_t, uint16_t>;  // a thread's V elements of a key
        float acc[HC][DPT];
        BITGATE_UNROLL
        for (int g = 0; g < HC; ++g)
            for (int e = 0; e < DPT; ++e) acc[g][e] = 0.0f;
        // l of head `lane` in key order: the last warp's lanes sum it inside the p.v loop, so
        // that its 128-long chain does not follow the loop.
        const bool lsum = warp == NW - 1 && lane < hc;
        float l = 0.0f;
        BITGATE_NO_UNROLL
        for (int vs = 0; vs < Geo::VSTAGES; ++vs) {
            const int s = Geo::KSTAGES + vs;
            cp_async_wait<kStageSlots - 1>();
            __syncthreads();  // the stage is everyone's; p written (at vs = 0)
            const int jb = vs * Geo::VK, je = min(jb + Geo::VK, nk);
            if (jb < je) {
                const VWord* vrow = reinterpret_cast<const VWord*>(ring + (s % kStageSlots) * kStageBytes) + t;
                auto step = [&](int j) {
                    const uint32_t vb = vrow[(j - jb) * T];
                    float v[DPT];
                    v[0] = h2f(vb & 0xffffu);
                    if constexpr (DPT == 2) v[DPT - 1] = h2f(vb >> 16);
                    float p[PR];
                    BITGATE_UNROLL
                    for (int r = 0; r < PR; r += 4) {
                        const float4 x = *reinterpret_cast<const float4*>(sp + j * PR + r);
                        p[r] = x.x, p[r + 1] = x.y, p[r + 2] = x.z, p[r + 3] = x.w;
                    }
                    BITGATE_UNROLL
                    for (int g = 0; g < HC; ++g) {
                        BITGATE_UNROLL
                        for (int e = 0; e < DPT; ++e) acc[g][e] = fmaf(p[g], v[e], acc[g][e]);
                    }
                    if (lsum) l = l + sp[j * PR + lane];
                };
                if (je - jb == Geo::VK) {
                    BITGATE_UNROLL8
                    for (int j = jb; j < je; ++j) step(j);
                } else {
                    BITGATE_NO_UNROLL
                    for (int j = jb; j < je; ++j) step(j);
                }
            }
            __syncthreads();  // every thread is done with the slot
            issue(s + kStageSlots);
        }
        if (lsum) {
            sl[lane] = l;
            if (n_split > 1) {
                const int h = head_of<B>(kvh, g0 + lane, G, n_kv_head);
                float* row = part + (int64_t(h) * n_split + c) * (D + kPartPad);
                row[D] = split_max(lane);
                row[D + 1] = l;
            }
        }
        if (n_split == 1) __syncthreads();  // sl written (the condition is the block's own)
        BITGATE_UNROLL
        for (int g = 0; g < HC; ++g) {
            if (g >= hc) break;
            const int h = head_of<B>(kvh, g0 + g, G, n_kv_head);
            float* const dst = n_split == 1 ? out + int64_t(h) * D : part + (int64_t(h) * n_split + c) * (D + kPartPad);
            if constexpr (DPT == 2) {
                reinterpret_cast<float2*>(dst)[t] = n_split == 1 ? make_float2(acc[g][0] / sl[g], acc[g][1] / sl[g])
                                                                 : make_float2(acc[g][0], acc[g][1]);
            } else {
                dst[t] = n_split == 1 ? acc[g][0] / sl[g] : acc[g][0];
            }
        }
    }
    cp_async_wait<0>();
}

// ---- decode, pipelined: the kernel for groups of up to 8 query heads ---------------------------

// cp_async16, cp_async_commit, cp_async_wait: kernels/cp_async.cuh.

constexpr int kPipeThreads = 128;  // thread t owns key t of a split in the scores
constexpr int kPipeSlots = 3;      // ring of shared-memory slots, each one split's K or V rows

// Splits per block, by shape only: about 256 blocks over the cache's splits, at most 8 each.
inline int64_t decode_pipe_splits_per_block(int64_t n_split, int64_t n_kv_head) {
    const int64_t per = n_split * n_kv_head / 256;
    return per < 1 ? 1 : per > 8 ? 8 : per;
}

// Which decode kernel a shape takes (both follow the one order: the choice moves no bit). The
// pipelined kernel for groups of up to 8 heads at head_dim 64 while the cache has fewer than 256
// (split, kv head) pairs; the split kernel otherwise (at head_dim 128 its 128-thread blocks beat
// the pipelined kernel on short caches: decode_split_threads). Measured on the H200, each kernel
// alone, back to back, group 7, head_dim 64 (bench/RESULTS.md, 2026-12-04, fifth): 128 pairs split
// 6.4 us against pipelined 6.2, 192 pairs 6.7 against 7.3, 256 pairs 7.5 against 8.6, 512 pairs
// (the 0.5B shape at L = 32768) 10.4 against 13.9.
inline bool decode_uses_pipe(int64_t n_split, int64_t n_kv_head, int64_t G, int64_t head_dim) {
    return head_dim <= 64 && G <= 8 && n_split * n_kv_head < 256;
}

inline size_t decode_pipe_smem_bytes(int D, int G) {
    const int HC = decode_chunk(G), PR = decode_prow(HC);
    return size_t(kPipeSlots) * kSplit * D * 2 + size_t(HC * D + kSplit * PR + 4 * HC + HC) * 4;
}

// One 128-thread block per (run of splits = blockIdx.x, kv head = blockIdx.y), for G <= 8: all
// the group's heads in one pass. The run's K and V rows stream through a ring of three
// shared-memory slots by cp.async (coalesced 16-byte copies, every thread issuing), two items
// ahead of the compute: while the scores of split c run, V of c and K of c + 1 are in flight;
// while its p.v runs, K and V of c + 1. K rows are stored with their 16-byte words XOR-swizzled
// by the row (word w of row j at w ^ (j & 7)), so the 8 rows a quarter warp reads at once sit in
// distinct banks; the order of each chain is the logical one. The order of the arithmetic is the
// model's, as in decode_split_kernel:
//  - scores: thread t = key t, one sequential fma chain over d per head, q from shared memory;
//  - the split's max per head: warp trees, then the four warps through shared memory; p to
//    shared memory as rows [key][head];
//  - p.v: thread t owns dim t % D of heads (t / D) * HG .. + HG - 1 (HG = HC for D = 128, half of
//    them for D = 64), keys in order, V from shared memory (a warp reads one row's 64 bytes);
//  - l: warp 0's lanes sum p of head `lane` in key order inside the same loop.
template <int D, int HC, Bug B>
__global__ void __launch_bounds__(kPipeThreads)
    decode_pipe_kernel(const float* __restrict__ q, const uint16_t* __restrict__ kc, const uint16_t* __restrict__ vc,
                       int64_t L, int64_t ctx, int n_kv_head, int G, float scale, int n_split, int per_block,
                       float* __restrict__ part, float* __restrict__ out) {
    constexpr int W = D / 8;                       // 16-byte words per row
    constexpr int PR = decode_prow(HC);            // floats per p row
    constexpr int NG = kPipeThreads / D;           // head groups in p.v (1 or 2)
    constexpr int HG = (HC + NG - 1) / NG;         // heads per group
    constexpr int PV = HG <= 2 ? 2 : (HG + 3) / 4 * 4;  // p values read per key (a float2 or float4s)
    constexpr int SLOT = kSplit * D;               // halves per slot
    constexpr int CHUNKS = kSplit * W / kPipeThreads;  // 16-byte copies per thread per item
    static_assert(kSplit == kPipeThreads && (D == 64 || D == 128), "one key per thread; two head groups at most");
    BITGATE_DYNAMIC_SMEM(smem4);
    uint16_t* slots = reinterpret_cast<uint16_t*>(smem4);                  // [3][kSplit][D]
    float* sq = reinterpret_cast<float*>(slots + kPipeSlots * SLOT);       // [HC][D]
    float* sp = sq + HC * D;                                                // [kSplit][PR]
    float* smax = sp + kSplit * PR;                                         // [4][HC]
    float* sl = smax + 4 * HC;                                              // [HC]
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int kvh = blockIdx.y;
    const int c0 = blockIdx.x * per_block, c1 = min(c0 + per_block, n_split);
    allow_dependents();  // as in decode_split_kernel
    const int64_t limit = B == Bug::read_past_L ? ctx : L;  // the defect reads the poison after L
    const int hc = min(HC, G);

    // Item i of the run: K (even i) or V (odd i) of split c0 + i / 2, into slot i % 3. Rows past
    // the split's last key are not copied (the compute never reads them).
    auto issue = [&](int i) {
        const int c = c0 + i / 2;
        if (c < c1) {
            const int64_t j0 = int64_t(c) * kSplit;
            const int nk = int(min(int64_t(kSplit), limit - j0));
            const uint16_t* src = (i % 2 == 0 ? kc : vc) + (int64_t(kvh) * ctx + j0) * D;
            uint16_t* dst = slots + (i % kPipeSlots) * SLOT;
            BITGATE_UNROLL
            for (int k = 0; k < CHUNKS; ++k) {
                const int e = t + k * kPipeThreads, row = e / W, w = e % W;
                const int pw = i % 2 == 0 ? (w ^ (row & 7)) : w;  // K swizzled, V plain
                if (row < nk) cp_async16(dst + row * D + pw * 8, src + int64_t(row) * D + w * 8);
            }
        }
        cp_async_commit();  // an empty group past the run keeps the count uniform
    };
    issue(0);
    issue(1);

    for (int i = t; i < HC * (D / 4); i += kPipeThreads) {
        const int g = i / (D / 4), w = i % (D / 4);
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const int64_t h = head_of<B>(kvh, g, G, n_kv_head);
        if (g < hc) v = __ldg(reinterpret_cast<const float4*>(q + h * D) + w);
        reinterpret_cast<float4*>(sq)[i] = v;
    }

    for (int c = c0; c < c1; ++c) {
        const int s = c - c0;
        const int64_t j0 = int64_t(c) * kSplit;
        const int nk = int(min(int64_t(kSplit), limit - j0));
        cp_async_wait<1>();  // K of this split has landed (this thread's copies) ...
        __syncthreads();     // ... and everyone's; sq written; the previous split's readers done
        issue(2 * s + 2);    // K of the next split, into the slot V of the previous one left

        float sc[HC];
        BITGATE_UNROLL
        for (int g = 0; g < HC; ++g) sc[g] = 0.0f;
        if (t < nk) {
            const uint4* krow = reinterpret_cast<const uint4*>(slots + ((2 * s) % kPipeSlots) * SLOT + t * D);
            const float4* sq4 = reinterpret_cast<const float4*>(sq);
            BITGATE_UNROLL
            for (int w = 0; w < W; ++w) {
                float f[8];
                unpack8(krow[w ^ (t & 7)], f);
                BITGATE_UNROLL
                for (int g = 0; g < HC; ++g) {
                    const float4 qa = sq4[g * (D / 4) + 2 * w], qb = sq4[g * (D / 4) + 2 * w + 1];
                    float x = sc[g];
                    x = fmaf(qa.x, f[0], x);
                    x = fmaf(qa.y, f[1], x);
                    x = fmaf(qa.z, f[2], x);
                    x = fmaf(qa.w, f[3], x);
                    x = fmaf(qb.x, f[4], x);
                    x = fmaf(qb.y, f[5], x);
                    x = fmaf(qb.z, f[6], x);
                    x = fmaf(qb.w, f[7], x);
                    sc[g] = x;
                }
            }
        }
        BITGATE_UNROLL
        for (int g = 0; g < HC; ++g) {
            sc[g] = t < nk ? sc[g] * scale : -INFINITY;
            float m = sc[g];
            BITGATE_UNROLL
            for (int off = 16; off > 0; off >>= 1) m = max_of(m, __shfl_xor_sync(0xffffffffu, m, off));
            if (lane == 0) smax[warp * HC + g] = m;
        }
        __syncthreads();  // the maxima are in; every thread is done with the K slot
        issue(2 * s + 3);  // V of the next split, into the K slot just read
        if (t < nk) {
            BITGATE_UNROLL
            for (int g = 0; g < HC; ++g) {
                const float m = max_of(max_of(smax[g], smax[HC + g]), max_of(smax[2 * HC + g], smax[3 * HC + g]));
                sp[t * PR + g] = exp_det(sc[g] - m);
            }
        }
        cp_async_wait<2>();  // V of this split has landed (this thread's copies) ...
        __syncthreads();     // ... and everyone's; p written

        const int d = t % D, hg = NG == 1 ? 0 : t / D;
        const uint16_t* vs = slots + ((2 * s + 1) % kPipeSlots) * SLOT + d;
        const float* pg = sp + hg * HG;  // this group's heads in each p row (16- or 8-byte aligned)
        const int lsel = lane < hc ? lane : 0;
        float acc[HG];
        BITGATE_UNROLL
        for (int e = 0; e < HG; ++e) acc[e] = 0.0f;
        float l = 0.0f;
        BITGATE_UNROLL4
        for (int j = 0; j < nk; ++j) {
            const float v = h2f(vs[j * D]);
            float p[PV];
            if constexpr (PV == 2) {
                const float2 x = *reinterpret_cast<const float2*>(pg + j * PR);
                p[0] = x.x, p[1] = x.y;
            } else {
                BITGATE_UNROLL
                for (int r = 0; r < PV; r += 4) {
                    const float4 x = *reinterpret_cast<const float4*>(pg + j * PR + r);
                    p[r] = x.x, p[r + 1] = x.y, p[r + 2] = x.z, p[r + 3] = x.w;
                }
            }
            BITGATE_UNROLL
            for (int e = 0; e < HG; ++e) acc[e] = fmaf(p[e], v, acc[e]);
            if (warp == 0) l = l + sp[j * PR + lsel];  // lanes < hc: l of head `lane`, keys in order
        }
        if (warp == 0 && lane < hc) {
            sl[lane] = l;
            if (n_split > 1) {
                const int h = head_of<B>(kvh, lane, G, n_kv_head);
                float* row = part + (int64_t(h) * n_split + c) * (D + kPartPad);
                row[D] = max_of(max_of(smax[lane], smax[HC + lane]), max_of(smax[2 * HC + lane], smax[3 * HC + lane]));
                row[D + 1] = l;
            }
        }
        if (n_split == 1) __syncthreads();  // sl written (the condition is the grid's own)
        BITGATE_UNROLL
        for (int e = 0; e < HG; ++e) {
            const int g = hg * HG + e;
            if (g >= hc) break;
            const int h = head_of<B>(kvh, g, G, n_kv_head);
            if (n_split == 1)
                out[int64_t(h) * D + d] = acc[e] / sl[g];
            else
                part[(int64_t(h) * n_split + c) * (D + kPartPad) + d] = acc[e];
        }
    }
    cp_async_wait<0>();  // nothing left in flight when the block ends
}

// The fold of a head's splits in position order, for dims [32 blockIdx.y, +32) of head
// blockIdx.x. Launched as dependent (kernels/pdl.cuh), so its launch overlaps the split kernel's
// last blocks. Splits come in chunks of 256: their m, l and acc go to shared memory (many loads in
// flight), the prefix max gives each split its M' and M, so both exp_det weights of every split
// are computed in parallel; 32 threads then run the fold, one fma per split and dim.
// How the unrolled combine warms its fold's code before it waits for the split kernel (below).
enum class Warm { none, pass, fold };

template <int D, Bug B, bool Unrolled, Warm W = Warm::none>
__global__ void __launch_bounds__(kCombineThreads)
    decode_combine_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    static_assert(!Unrolled || W != Warm::none, "every unrolled combine warms (combine_for)");
    __shared__ float s_scan[kCombineThreads], s_l[kCombineThreads], s_wa[kCombineThreads], s_wb[kCombineThreads];
    __shared__ float4 s_acc[kCombineThreads][kCombineDims / 4];
    const int t = threadIdx.x, h = blockIdx.x, d0 = blockIdx.y * kCombineDims;
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    // The unrolled fold is 256 steps of straight code, and run once an SM it stalls on fetching
    // its instructions (1.8 us against 0.64 warm). So a warmed kernel first runs one chunk on
    // zeros, through the same code, while the split kernel still runs (it is launched as a
    // dependent, and this pass comes before its wait); the pass reads nothing from global memory
    // and writes only shared memory. Warm::pass runs the whole pass (the prefix max and the
    // weights' exp_det too), Warm::fold only the fold, on zero weights: the first pays where the
    // split kernel leaves room for the combine's blocks from the start, the second where it does
    // not (combine_for). No bit depends on either. `warm` is a constant false outside the warmed
    // kernels' loop, so the other kernels compile to the code they had before (the same PTX; run
    // inside the loop, the 7B combine measured 2.6 us slower).
    auto fold_pass = [&](const bool warm) {
        if (!warm) wait_then_allow_dependents();  // part is complete after this
        const int last = warm ? kCombineThreads : B == Bug::skip_last_split ? n_split - 1 : n_split;
        float M = 0.0f, A = 0.0f, Ls = 0.0f;
        for (int base = 0; base < last; base += kCombineThreads) {
            const int nc = min(kCombineThreads, last - base);
            float m = warm ? 0.0f : -INFINITY, l = 0.0f;
            if (t < nc && !warm) {
                m = ph[int64_t(base + t) * (D + kPartPad) + D];
                l = ph[int64_t(base + t) * (D + kPartPad) + D + 1];
            }
            constexpr int R = kCombineDims / 4;  // 16-byte words of a split's dims, and words per thread
            float4 a[R];  // every load of the chunk issued before the first store
            BITGATE_UNROLL
            for (int k = 0; k < R; ++k) {
                const int i = t + k * kCombineThreads, r = i / R, w = i % R;
                if (r < nc)
                    a[k] = warm ? make_float4(0.0f, 0.0f, 0.0f, 0.0f)
                                : reinterpret_cast<const float4*>(ph + int64_t(base + r) * (D + kPartPad) + d0)[w];
            }
            BITGATE_UNROLL
            for (int k = 0; k < R; ++k) {
                const int i = t + k * kCombineThreads;
                if (i / R < nc) s_acc[i / R][i % R] = a[k];
            }
            s_l[t] = l;
            s_scan[t] = (t == 0 && base > 0) ? max_of(M, m) : m;
            const bool fold_only = W == Warm::fold && warm;
            if (fold_only) s_wa[t] = s_wb[t] = 0.0f;
            __syncthreads();
            if (!fold_only) {
                for (int off = 1; off < kCombineThreads; off <<= 1) {  // inclusive prefix max
                    const float y = t >= off ? s_scan[t - off] : -INFINITY;
                    __syncthreads();
                    s_scan[t] = max_of(s_scan[t], y);
                    __syncthreads();
                }
                if (t < nc) {
                    const float Mn = s_scan[t], Mo = t == 0 ? M : s_scan[t - 1];
                    s_wa[t] = exp_det(Mo - Mn);
                    s_wb[t] = exp_det(m - Mn);
                }
                __syncthreads();
            }
            if (t < kCombineDims) {
                const float* acc = reinterpret_cast<const float*>(&s_acc[0][0]);
                int i = 0;
                if (base == 0) {  // split 0 starts the state
                    A = acc[t];
                    Ls = s_l[0];
                    i = 1;
                }
                // Only the fma on A (and on Ls) is a chain. In the Unrolled kernel a whole chunk runs
                // fully unrolled, so the compiler issues each split's loads and products far ahead of
                // its fma: 5 cycles a split where the loop below, which waits on each batch's loads,
                // takes 20 (the fold alone timed on the H200: 1274 against 3056 cycles for 256
                // splits, 1173 with every operand already in registers). Its code is 30 times the
                // loop's, which cost short caches 0.3-0.5 us, so only caches of a whole chunk or more
                // take it (combine_for); every combine folds in the one order.
                auto fold = [&](int j) {  // split j into the state
                    A = fmaf(A, s_wa[j], acc[j * kCombineDims + t] * s_wb[j]);
                    Ls = fmaf(Ls, s_wa[j], s_l[j] * s_wb[j]);
                };
                if constexpr (Unrolled) {
                    if (nc == kCombineThreads) {
                        if (i == 0) fold(0);  // a later chunk: its split 0 folds like the rest
                        BITGATE_UNROLL
                        for (int j = 1; j < kCombineThreads; ++j) fold(j);
                        i = nc;
                    }
                }
                for (; i + 8 <= nc; i += 8) {
                    float wa[8], xb[8], lb[8];
                    BITGATE_UNROLL
                    for (int e = 0; e < 8; ++e) {
                        wa[e] = s_wa[i + e];
                        xb[e] = acc[(i + e) * kCombineDims + t] * s_wb[i + e];
                        lb[e] = s_l[i + e] * s_wb[i + e];
                    }
                    BITGATE_UNROLL
                    for (int e = 0; e < 8; ++e) {
                        A = fmaf(A, wa[e], xb[e]);
                        Ls = fmaf(Ls, wa[e], lb[e]);
                    }
                }
                for (; i < nc; ++i) fold(i);
            }
            M = s_scan[nc - 1];
            __syncthreads();
        }
        if (t < kCombineDims && !warm) out[int64_t(h) * D + d0 + t] = A / Ls;
    };
    if constexpr (Unrolled && W != Warm::none) {
        BITGATE_NO_UNROLL
        for (int pass = 0; pass < 2; ++pass) fold_pass(pass == 0);
    } else {
        fold_pass(false);
    }
}

constexpr int kCombineWarpSplits = 32;  // caches of up to this many splits take the warp combine

// The fold for caches of up to 32 splits: one warp per (head, 32 dims), with no shared memory and
// no block barrier. Lane c holds split c's m and l: a prefix max by shuffles (exact in any order)
// gives every split its M and M', so both weights of every split come out in parallel; then lane d
// runs the chain of dim d, taking split c's weights from lane c, every acc load issued before the
// first fma. At 7B, L = 4096 (32 splits) the pair with it took 9.75 us against 11.03 with
// decode_combine_kernel, whose 256 threads spend their barriers on a prefix max over 256 slots;
// from 64 splits on the block kernel is faster (bench/RESULTS.md, 2026-12-04, fifth).
template <int D, Bug B>
__global__ void __launch_bounds__(32)
    decode_combine_warp_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    static_assert(kCombineDims == 32, "a lane a dim");
    const int lane = threadIdx.x, h = blockIdx.x, d = blockIdx.y * kCombineDims + lane;
    wait_then_allow_dependents();  // launched as dependent of the split kernel: part is complete after this
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    const int n = B == Bug::skip_last_split ? n_split - 1 : n_split;  // 2 <= n_split <= 32
    float m = -INFINITY, l = 0.0f;
    if (lane < n) {
        m = ph[int64_t(lane) * (D + kPartPad) + D];
        l = ph[int64_t(lane) * (D + kPartPad) + D + 1];
    }
    float x[kCombineWarpSplits];  // acc of every split at dim d
    BITGATE_UNROLL
    for (int c = 0; c < kCombineWarpSplits; ++c) x[c] = c < n ? ph[int64_t(c) * (D + kPartPad) + d] : 0.0f;
    float Mn = m;  // M' of split `lane`: the max of m over splits 0 .. lane
    BITGATE_UNROLL
    for (int off = 1; off < 32; off <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, Mn, off);
        if (lane >= off) Mn = max_of(Mn, y);
    }
    const float Mo = __shfl_up_sync(0xffffffffu, Mn, 1);  // M before split `lane` (unused at 0)
    const float wa = exp_det(Mo - Mn), wb = exp_det(m - Mn), lb = l * wb;
    float A = x[0], Ls = __shfl_sync(0xffffffffu, l, 0);  // split 0 starts the state
    BITGATE_UNROLL
    for (int c = 1; c < kCombineWarpSplits; ++c) {
        const float a = __shfl_sync(0xffffffffu, wa, c), b = __shfl_sync(0xffffffffu, wb, c);
        const float lbc = __shfl_sync(0xffffffffu, lb, c);
        if (c < n) {
            A = fmaf(A, a, x[c] * b);
            Ls = fmaf(Ls, a, lbc);
        }
    }
    out[int64_t(h) * D + d] = A / Ls;
}

// The combine a cache of n_split splits takes, for the launcher and the CPU test alike
// (scheduling only: every kernel folds in the one order): the warp kernel up to 32 splits, then
// the block kernel, unrolled from a whole chunk on. Grid: (heads, head_dim / 32).
struct CombineLaunch {
    void (*kernel)(const float*, int, float*);
    int threads;
};
// The unrolled kernel warms its fold's code first. Where the split kernel has at most 512
// (split, kv head) pairs, about 4 blocks an SM, the combine's blocks find room at once and warm
// the whole pass: 0.5B at L = 32768 (512 pairs) 14.84-14.91 us against 15.61-15.62 for the pair
// (H100, bench/RESULTS.md, 2026-12-05, fourth), and 14.50-14.57 against 14.63-14.64 with the
// fold alone warmed (sixth). With more pairs (the 7B shape at L = 32768: 1,024, every SM full
// until its split blocks end) the whole warm pass started late and cost 0.55 us (fourth), while
// the fold alone gains 0.55 us: 32.51-32.59 against 33.07-33.15 (H100, sixth).
constexpr int kCombineWarmPairs = 512;
template <int D, Bug B>
constexpr CombineLaunch combine_for(int n_split, int64_t n_kv_head) {
    if (n_split <= kCombineWarpSplits) return {decode_combine_warp_kernel<D, B>, 32};
    if (n_split < kCombineThreads) return {decode_combine_kernel<D, B, false>, kCombineThreads};
    return {n_split * n_kv_head <= kCombineWarmPairs ? decode_combine_kernel<D, B, true, Warm::pass>
                                                     : decode_combine_kernel<D, B, true, Warm::fold>,
            kCombineThreads};
}

inline size_t prefill_smem_bytes(int D) {
    return size_t(2 * kBQ * (D + 4) + kBQ * (kSplit + 4) + 2 * kBQ) * 4;
}

// The dims thread tx owns in prefill's p.v and output: four at 4 tx, and at head_dim 128 four
// more at 64 + 4 tx (e = 0..3, 4..7). A half warp's read of a V row then covers 256 contiguous
// bytes without a bank conflict; with 8 consecutive dims a thread (8 tx, until 2026-12-04) its
// 16-byte reads met 4-way conflicts and p.v was bound by shared memory.
__host__ __device__ inline constexpr int prefill_dim(int tx, int e) { return (e / 4) * 64 + 4 * tx + e % 4; }

// Prefill, one block per (64 queries = blockIdx.x, head = blockIdx.y). Per split: scores of the
// 64 x 128 tile in 64-key sub-tiles (thread (ty, tx) owns rows ty + 16a and keys tx + 16b, each
// a sequential fma chain over d), row max, p, then p.v in key order (thread owns rows ty + 16a
// and dims prefill_dim(tx, e)), then the fold into the rows' state, all in registers.
template <int D, Bug B>
__global__ void __launch_bounds__(kPrefillThreads, 2)
    prefill_kernel(const float* __restrict__ q, const uint16_t* __restrict__ kc, const uint16_t* __restrict__ vc,
                   int64_t n_q, int64_t L, int64_t ctx, int n_head, int n_kv_head, int G, float scale,
                   float* __restrict__ out) {
    constexpr int DP = D + 4, SP = kSplit + 4, DT = D / 16, W = D / 8;
    BITGATE_DYNAMIC_SMEM(smem4);
    float* sQ = reinterpret_cast<float*>(smem4);  // [kBQ][DP]
    float* sKV = sQ + kBQ * DP;                     // [kBK][DP]: K, then V, as f32
    float* sS = sKV + kBK * DP;                     // [kBQ][SP]: scores, then p
    float* s_m = sS + kBQ * SP;                     // [kBQ]: split max of each row
    int* s_act = reinterpret_cast<int*>(s_m + kBQ);  // [kBQ]: the row sees a key of the split
    const int t = threadIdx.x, tx = t % 16, ty = t / 16;
    const int h = blockIdx.y;
    const int kvh = B == Bug::kv_head_mod ? h % n_kv_head : h / G;
    const int64_t i0 = int64_t(blockIdx.x) * kBQ, past = L - n_q;
    const int rows = int(min(int64_t(kBQ), n_q - i0));
    const int64_t maxpos = past + i0 + rows - 1;  // the last key any row of the tile sees
    const uint16_t* kb = kc + int64_t(kvh) * ctx * D;
    const uint16_t* vb = vc + int64_t(kvh) * ctx * D;

    for (int i = t; i < kBQ * (D / 4); i += kPrefillThreads) {
        const int r = i / (D / 4), w = i % (D / 4);
        const float4 v = r < rows ? __ldg(reinterpret_cast<const float4*>(q + ((i0 + r) * n_head + h) * D) + w)
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        reinterpret_cast<float4*>(sQ + r * DP)[w] = v;
    }
    // Rows j0 .. j0 + n - 1 of a cache into sKV as f32 (zeros below them).
    auto load_rows = [&](const uint16_t* base, int64_t j0, int n) {
        for (int i = t; i < kBK * W; i += kPrefillThreads) {
            const int r = i / W, w = i % W;
            float f[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
            if (r < n) unpack8(__ldg(reinterpret_cast<const uint4*>(base + (j0 + r) * D) + w), f);
            reinterpret_cast<float4*>(sKV + r * DP)[2 * w] = make_float4(f[0], f[1], f[2], f[3]);
            reinterpret_cast<float4*>(sKV + r * DP)[2 * w + 1] = make_float4(f[4], f[5], f[6], f[7]);
        }
    };

    float A[4][DT] = {}, M[4] = {}, Ls[4] = {};
    const int n_split = int(maxpos / kSplit) + 1;
    for (int c = 0; c < n_split; ++c) {
        const int64_t j0 = int64_t(c) * kSplit;
        const int nk = int(min(int64_t(kSplit), maxpos + 1 - j0));  // keys of the split the tile reads
        for (int kt = 0; kt * kBK < nk; ++kt) {
            const int nkt = min(kBK, nk - kt * kBK);
            __syncthreads();  // sKV's previous readers are done
            load_rows(kb, j0 + kt * kBK, nkt);
            __syncthreads();
            float s[4][4];
            BITGATE_UNROLL
            for (int a = 0; a < 4; ++a)
                BITGATE_UNROLL
                for (int b = 0; b < 4; ++b) s[a][b] = 0.0f;
            BITGATE_UNROLL4
            for (int d = 0; d < D; d += 4) {
                float4 qa[4], kk[4];
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) qa[a] = *reinterpret_cast<const float4*>(sQ + (ty + 16 * a) * DP + d);
                BITGATE_UNROLL
                for (int b = 0; b < 4; ++b) kk[b] = *reinterpret_cast<const float4*>(sKV + (tx + 16 * b) * DP + d);
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a)
                    BITGATE_UNROLL
                    for (int b = 0; b < 4; ++b) {
                        float x = s[a][b];
                        x = fmaf(qa[a].x, kk[b].x, x);
                        x = fmaf(qa[a].y, kk[b].y, x);
                        x = fmaf(qa[a].z, kk[b].z, x);
                        x = fmaf(qa[a].w, kk[b].w, x);
                        s[a][b] = x;
                    }
            }
            BITGATE_UNROLL
            for (int a = 0; a < 4; ++a)
                BITGATE_UNROLL
                for (int b = 0; b < 4; ++b) {
                    const int r = ty + 16 * a, jj = kt * kBK + tx + 16 * b;
                    const bool seen = jj < nk && (B == Bug::non_causal || j0 + jj <= past + i0 + r);
                    sS[r * SP + jj] = seen ? s[a][b] * scale : -INFINITY;
                }
        }
        __syncthreads();
        {  // row max and p: 4 threads per row
            const int r = t / 4, part = t % 4;
            float m = -INFINITY;
            for (int j = part; j < nk; j += 4) m = max_of(m, sS[r * SP + j]);
            m = max_of(m, __shfl_xor_sync(0xffffffffu, m, 1));
            m = max_of(m, __shfl_xor_sync(0xffffffffu, m, 2));
            const bool active = m != -INFINITY;
            for (int j = part; j < nk; j += 4) {
                const float x = sS[r * SP + j];
                sS[r * SP + j] = (!active || x == -INFINITY) ? 0.0f : exp_det(x - m);
            }
            if (part == 0) {
                s_m[r] = m;
                s_act[r] = active;
            }
        }
        float acc[4][DT], lsum[4];
        BITGATE_UNROLL
        for (int a = 0; a < 4; ++a) {
            lsum[a] = 0.0f;
            BITGATE_UNROLL
            for (int e = 0; e < DT; ++e) acc[a][e] = 0.0f;
        }
        for (int kt = 0; kt * kBK < nk; ++kt) {
            const int nkt = min(kBK, nk - kt * kBK);
            __syncthreads();  // p written; sKV free
            load_rows(vb, j0 + kt * kBK, nkt);
            __syncthreads();
            // Key j into the chains of this thread's rows and dims.
            auto key = [&](int j, const float* p) {
                float v[DT];
                BITGATE_UNROLL
                for (int e = 0; e < DT; e += 4) {
                    const float4 x = *reinterpret_cast<const float4*>(sKV + j * DP + prefill_dim(tx, e));
                    v[e] = x.x, v[e + 1] = x.y, v[e + 2] = x.z, v[e + 3] = x.w;
                }
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) {
                    BITGATE_UNROLL
                    for (int e = 0; e < DT; ++e) acc[a][e] = fmaf(p[a], v[e], acc[a][e]);
                    lsum[a] = lsum[a] + p[a];
                }
            };
            // Four keys at a time: one 16-byte read of p a row instead of four scalar ones.
            const float* pt = sS + kt * kBK;
            int j = 0;
            for (; j + 4 <= nkt; j += 4) {
                float4 p4[4];
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) p4[a] = *reinterpret_cast<const float4*>(pt + (ty + 16 * a) * SP + j);
                const float p0[4] = {p4[0].x, p4[1].x, p4[2].x, p4[3].x}, p1[4] = {p4[0].y, p4[1].y, p4[2].y, p4[3].y};
                const float p2[4] = {p4[0].z, p4[1].z, p4[2].z, p4[3].z}, p3[4] = {p4[0].w, p4[1].w, p4[2].w, p4[3].w};
                key(j, p0);
                key(j + 1, p1);
                key(j + 2, p2);
                key(j + 3, p3);
            }
            for (; j < nkt; ++j) {
                float p[4];
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) p[a] = pt[(ty + 16 * a) * SP + j];
                key(j, p);
            }
        }
        BITGATE_UNROLL
        for (int a = 0; a < 4; ++a) {
            const int r = ty + 16 * a;
            if (c == 0) {
                M[a] = s_m[r];
                Ls[a] = lsum[a];
                BITGATE_UNROLL
                for (int e = 0; e < DT; ++e) A[a][e] = acc[a][e];
            } else if (s_act[r]) {
                const float m = s_m[r], Mn = max_of(m, M[a]);
                const float wa = exp_det(M[a] - Mn), wb = exp_det(m - Mn);
                Ls[a] = fmaf(Ls[a], wa, lsum[a] * wb);
                BITGATE_UNROLL
                for (int e = 0; e < DT; ++e) A[a][e] = fmaf(A[a][e], wa, acc[a][e] * wb);
                M[a] = Mn;
            }
        }
        __syncthreads();  // sS and the row stats are rewritten by the next split
    }
    BITGATE_UNROLL
    for (int a = 0; a < 4; ++a) {
        const int r = ty + 16 * a;
        if (r >= rows || (B == Bug::tail_unwritten && i0 + r == n_q - 1)) continue;
        float* o = out + ((i0 + r) * n_head + h) * D;
        BITGATE_UNROLL
        for (int e = 0; e < DT; e += 4)
            *reinterpret_cast<float4*>(o + prefill_dim(tx, e)) =
                make_float4(A[a][e] / Ls[a], A[a][e + 1] / Ls[a], A[a][e + 2] / Ls[a], A[a][e + 3] / Ls[a]);
    }
}

}  // namespace bitgate::cuda::attn
