// Decode attention, the split kernel (docs/attention.md, "The kernels").
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

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
//    shared memory as rows [key][head] (by exp_det_nonpos: s - m <= 0, the same bits).
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
            for (int k = 1; k < KPT; ++k) m = decode_max(m, sc[k][g]);
            BITGATE_UNROLL
            for (int off = 16; off > 0; off >>= 1) m = decode_max(m, __shfl_xor_sync(0xffffffffu, m, off));
            if (lane == 0) smax[warp * HC + g] = m;
        }
        __syncthreads();
        // The split's max of head g, over the warps' maxima.
        auto split_max = [&](int g) {
            float m = smax[g];
            BITGATE_UNROLL
            for (int w = 1; w < NW; ++w) m = decode_max(m, smax[w * HC + g]);
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
                for (int g = 0; g < PR; ++g) pk[g] = g < HC ? exp_det_nonpos(sc[k][g] - mh[g]) : 0.0f;
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

}  // namespace bitgate::cuda::attn
