// Prefill attention: one block per (64 queries, head), the fold (both levels) in registers after
// each split.
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

constexpr int kBQ = 64, kBK = 64, kPrefillThreads = 256;

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
// and dims prefill_dim(tx, e)), then the fold into the rows' state, all in registers. MG: some row
// sees more than one fold group (prefill_multi_group); without it level two is left out and the
// group's state is the whole (the same bits: one group), the code the kernel had before the groups.
template <int D, Bug B, bool MG>
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

    // The rows' state: the fold of the present group (GM, GLs, GA) in registers, and of the whole
    // (M, Ls, A), whose A waits between groups in the thread's own dims of its rows of `out` (the
    // same thread reads it back; a row is written only there and at its end). In registers too,
    // A took the kernel past its 128 registers (320 bytes of spills at head_dim 128); this way the
    // store and the load come once a group of 32 splits.
    // With one group (MG false) the whole is the group: level two and the trips through `out` are
    // left out, and the group's state is stored after the last split. The two-level bookkeeping
    // cost 3-5% at n_q = 512 and 3325 on an H100, where no row has more than one group
    // (bench/RESULTS.md, 2026-12-07, tenth).
    float M[4] = {}, Ls[4] = {}, GA[4][DT] = {}, GM[4] = {}, GLs[4] = {};
    constexpr int FG = int(kAttnFoldGroup);
    // A split's or a group's (m, l, x) into a state (the first of a group, or group 0, starts it instead).
    auto fold = [](float& Ms, float& Lss, float* As, float m, float l, const float* x) {
        const float Mn = max_of(m, Ms);
        const float wa = exp_det(Ms - Mn), wb = exp_det(m - Mn);
        Lss = fmaf(Lss, wa, l * wb);
        BITGATE_UNROLL
        for (int e = 0; e < DT; ++e) As[e] = fmaf(As[e], wa, x[e] * wb);
        Ms = Mn;
    };
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
            // Level one: the group's first split starts its state. Past the row's last split the row
            // skips; with one group the first split starts every row unconditionally (every row
            // reaches it), which keeps that kernel's registers within 128 with no stack.
            const bool start = MG ? c % FG == 0 : c == 0;
            if (!s_act[r] && (MG || !start)) continue;
            if (start) {
                GM[a] = s_m[r];
                GLs[a] = lsum[a];
                BITGATE_UNROLL
                for (int e = 0; e < DT; ++e) GA[a][e] = acc[a][e];
            } else {
                fold(GM[a], GLs[a], GA[a], s_m[r], lsum[a], acc[a]);
            }
            if constexpr (MG) {  // with one group, the group is the whole
                // Level two, once the row's group is complete: at the group's end or the row's last
                // split. Rows past n_q (and the mutant's last row) have no output and skip it.
                const bool last = int64_t(c) == (past + i0 + r) / kSplit;
                if (c % FG != FG - 1 && !last) continue;
                if (r >= rows || (B == Bug::tail_unwritten && i0 + r == n_q - 1)) continue;
                float* o = out + ((i0 + r) * n_head + h) * D;
                float A[DT];
                if (c < FG) {  // group 0 starts the whole
                    M[a] = GM[a];
                    Ls[a] = GLs[a];
                    BITGATE_UNROLL
                    for (int e = 0; e < DT; ++e) A[e] = GA[a][e];
                } else {
                    BITGATE_UNROLL
                    for (int e = 0; e < DT; e += 4) {
                        const float4 x = *reinterpret_cast<const float4*>(o + prefill_dim(tx, e));
                        A[e] = x.x, A[e + 1] = x.y, A[e + 2] = x.z, A[e + 3] = x.w;
                    }
                    fold(M[a], Ls[a], A, GM[a], GLs[a], GA[a]);
                }
                BITGATE_UNROLL
                for (int e = 0; e < DT; e += 4)
                    *reinterpret_cast<float4*>(o + prefill_dim(tx, e)) =
                        last ? make_float4(A[e] / Ls[a], A[e + 1] / Ls[a], A[e + 2] / Ls[a], A[e + 3] / Ls[a])
                             : make_float4(A[e], A[e + 1], A[e + 2], A[e + 3]);
            }
        }
        __syncthreads();  // sS and the row stats are rewritten by the next split
    }
    if constexpr (!MG) {
        BITGATE_UNROLL
        for (int a = 0; a < 4; ++a) {
            const int r = ty + 16 * a;
            if (r >= rows || (B == Bug::tail_unwritten && i0 + r == n_q - 1)) continue;
            float* o = out + ((i0 + r) * n_head + h) * D;
            BITGATE_UNROLL
            for (int e = 0; e < DT; e += 4)
                *reinterpret_cast<float4*>(o + prefill_dim(tx, e)) = make_float4(
                    GA[a][e] / GLs[a], GA[a][e + 1] / GLs[a], GA[a][e + 2] / GLs[a], GA[a][e + 3] / GLs[a]);
        }
    }
}

// Whether a prefill call has a row that sees more than one fold group (more than 4,096 keys): the
// kernel's MG, by shape only. Without it every row's fold is the plain fold of one group, so
// either instantiation would give the same bits; this one is the faster there.
inline bool prefill_multi_group(int64_t L) { return L > int64_t(kAttnFoldGroup) * kSplit; }

}  // namespace bitgate::cuda::attn
