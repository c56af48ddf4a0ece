// Decode attention, the pipelined kernel for groups of up to 8 query heads (the launcher takes it
// at head_dim 64 only; its head_dim 128 form is kept and tested on the CPU, docs/attention.md).
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

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
            for (int off = 16; off > 0; off >>= 1) m = decode_max(m, __shfl_xor_sync(0xffffffffu, m, off));
            if (lane == 0) smax[warp * HC + g] = m;
        }
        __syncthreads();  // the maxima are in; every thread is done with the K slot
        issue(2 * s + 3);  // V of the next split, into the K slot just read
        if (t < nk) {
            BITGATE_UNROLL
            for (int g = 0; g < HC; ++g) {
                const float m = decode_max(decode_max(smax[g], smax[HC + g]), decode_max(smax[2 * HC + g], smax[3 * HC + g]));
                sp[t * PR + g] = exp_det_nonpos(sc[g] - m);  // s - m <= 0
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
                row[D] = decode_max(decode_max(smax[lane], smax[HC + lane]), decode_max(smax[2 * HC + lane], smax[3 * HC + lane]));
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

}  // namespace bitgate::cuda::attn
