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

#include "bitgate/attention_order.hpp"
#include "bitgate/exp.hpp"

namespace bitgate::cuda::attn {

enum class Bug { none, non_causal, kv_head_mod, skip_last_split, tail_unwritten, read_past_L };

constexpr int kSplit = int(kAttnSplit);
constexpr int kDecodeThreads = 128;
constexpr int kCombineThreads = 256;
constexpr int kCombineDims = 32;  // dims per combine block
constexpr int kPartPad = 4;       // part rows: acc[D], m, l, 2 unused (16-byte rows)
constexpr int kBQ = 64, kBK = 64, kPrefillThreads = 256;

#if !defined(BITGATE_CUDA_SIM)
#define BITGATE_DYNAMIC_SMEM(name) extern __shared__ float4 name[]
#define BITGATE_UNROLL _Pragma("unroll")
#define BITGATE_UNROLL4 _Pragma("unroll 4")
#else
#define BITGATE_UNROLL
#define BITGATE_UNROLL4
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

inline size_t decode_smem_bytes(int D, int G) { return size_t(kSplit * D + G * D + G * kSplit + G) * 4; }

// Decode, one block per (split c = blockIdx.x, kv head = blockIdx.y), serving the G query heads
// of the kv head so that K and V are read once. K rows go to registers (thread t owns key t,
// 16-byte loads), V rows to shared memory as f32; one split's (acc, m, l) per head goes to part,
// or, for a single split, out = acc / l directly (the fold of one split).
template <int D, Bug B>
__global__ void __launch_bounds__(kDecodeThreads)
    decode_split_kernel(const float* __restrict__ q, const uint16_t* __restrict__ kc, const uint16_t* __restrict__ vc,
                        int64_t L, int64_t ctx, int n_kv_head, int G, float scale, int n_split,
                        float* __restrict__ part, float* __restrict__ out) {
    BITGATE_DYNAMIC_SMEM(smem4);
    float* sv = reinterpret_cast<float*>(smem4);  // [kSplit][D]
    float* sq = sv + kSplit * D;                   // [G][D]
    float* sp = sq + G * D;                        // [G][kSplit]: scores, then p
    float* sm = sp + G * kSplit;                   // [G]: split max
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int kvh = blockIdx.y, c = blockIdx.x;
    const int64_t j0 = int64_t(c) * kSplit;
    const int64_t limit = B == Bug::read_past_L ? ctx : L;  // the defect reads the poison after L
    const int nk = int(min(int64_t(kSplit), limit - j0));
    const uint4* kp = reinterpret_cast<const uint4*>(kc + (int64_t(kvh) * ctx + j0) * D);
    const uint4* vp = reinterpret_cast<const uint4*>(vc + (int64_t(kvh) * ctx + j0) * D);
    constexpr int W = D / 8;  // 16-byte words per row

    // All loads first: this thread's key row and its share of the V rows, then q.
    uint4 kr[W], vr[W];
    if (t < nk) {
        BITGATE_UNROLL
        for (int i = 0; i < W; ++i) kr[i] = __ldg(kp + int64_t(t) * W + i);
    }
    BITGATE_UNROLL
    for (int r = 0; r < W; ++r) {
        const int i = t + r * kDecodeThreads;
        if (i < nk * W) vr[r] = __ldg(vp + i);
    }
    for (int i = t; i < G * (D / 4); i += kDecodeThreads) {
        const int g = i / (D / 4), w = i % (D / 4);
        const int h = head_of<B>(kvh, g, G, n_kv_head);
        reinterpret_cast<float4*>(sq)[i] = __ldg(reinterpret_cast<const float4*>(q + int64_t(h) * D) + w);
    }
    BITGATE_UNROLL
    for (int r = 0; r < W; ++r) {
        const int i = t + r * kDecodeThreads;
        if (i < nk * W) {
            float f[8];
            unpack8(vr[r], f);
            reinterpret_cast<float4*>(sv)[2 * i] = make_float4(f[0], f[1], f[2], f[3]);
            reinterpret_cast<float4*>(sv)[2 * i + 1] = make_float4(f[4], f[5], f[6], f[7]);
        }
    }
    __syncthreads();

    // Scores: key t against every head of the group, each a sequential fma chain over d.
    if (t < nk) {
        const float4* sq4 = reinterpret_cast<const float4*>(sq);
        for (int g0 = 0; g0 < G; g0 += 8) {
            float s[8];
            BITGATE_UNROLL
            for (int gg = 0; gg < 8; ++gg) s[gg] = 0.0f;
            BITGATE_UNROLL
            for (int i = 0; i < W; ++i) {
                float kf[8];
                unpack8(kr[i], kf);
                BITGATE_UNROLL
                for (int gg = 0; gg < 8; ++gg) {
                    if (g0 + gg < G) {
                        const float4 qa = sq4[(g0 + gg) * (D / 4) + 2 * i], qb = sq4[(g0 + gg) * (D / 4) + 2 * i + 1];
                        float a = s[gg];
                        a = fmaf(qa.x, kf[0], a);
                        a = fmaf(qa.y, kf[1], a);
                        a = fmaf(qa.z, kf[2], a);
                        a = fmaf(qa.w, kf[3], a);
                        a = fmaf(qb.x, kf[4], a);
                        a = fmaf(qb.y, kf[5], a);
                        a = fmaf(qb.z, kf[6], a);
                        a = fmaf(qb.w, kf[7], a);
                        s[gg] = a;
                    }
                }
            }
            BITGATE_UNROLL
            for (int gg = 0; gg < 8; ++gg)
                if (g0 + gg < G) sp[(g0 + gg) * kSplit + t] = s[gg] * scale;
        }
    }
    __syncthreads();

    // Split max per head: warp w takes heads w, w+4, ...
    for (int g = warp; g < G; g += kDecodeThreads / 32) {
        float m = -INFINITY;
        for (int j = lane; j < nk; j += 32) m = max_of(m, sp[g * kSplit + j]);
        BITGATE_UNROLL
        for (int off = 16; off > 0; off >>= 1) m = max_of(m, __shfl_xor_sync(0xffffffffu, m, off));
        if (lane == 0) sm[g] = m;
    }
    __syncthreads();
    if (t < nk)
        for (int g = 0; g < G; ++g) sp[g * kSplit + t] = exp_det(sp[g * kSplit + t] - sm[g]);
    __syncthreads();

    // p.v: thread (slot, d8) owns dims 4 d8 .. 4 d8 + 3 and D/2 + 4 d8 .. D/2 + 4 d8 + 3 (adjacent
    // lanes read adjacent 16-byte words) of heads slot, slot + SLOTS, ...; keys in order. Every
    // thread sums l itself (the same chain, the same bits).
    constexpr int SLOTS = kDecodeThreads / W;
    const int d8 = t % W, slot = t / W;
    for (int g = slot; g < G; g += SLOTS) {
        float acc[8];
        BITGATE_UNROLL
        for (int e = 0; e < 8; ++e) acc[e] = 0.0f;
        float l = 0.0f;
        const float* pg = sp + g * kSplit;
        auto step = [&](float p, int j) {
            const float4 va = reinterpret_cast<const float4*>(sv + j * D)[d8];
            const float4 vb = reinterpret_cast<const float4*>(sv + j * D)[d8 + W];
            acc[0] = fmaf(p, va.x, acc[0]);
            acc[1] = fmaf(p, va.y, acc[1]);
            acc[2] = fmaf(p, va.z, acc[2]);
            acc[3] = fmaf(p, va.w, acc[3]);
            acc[4] = fmaf(p, vb.x, acc[4]);
            acc[5] = fmaf(p, vb.y, acc[5]);
            acc[6] = fmaf(p, vb.z, acc[6]);
            acc[7] = fmaf(p, vb.w, acc[7]);
            l = l + p;
        };
        int j = 0;
        for (; j + 4 <= nk; j += 4) {  // p of 4 keys in one 16-byte read, still one key at a time
            const float4 p4 = *reinterpret_cast<const float4*>(pg + j);
            step(p4.x, j);
            step(p4.y, j + 1);
            step(p4.z, j + 2);
            step(p4.w, j + 3);
        }
        for (; j < nk; ++j) step(pg[j], j);
        const int h = head_of<B>(kvh, g, G, n_kv_head);
        if (n_split == 1) {
            float4* o = reinterpret_cast<float4*>(out + int64_t(h) * D);
            o[d8] = make_float4(acc[0] / l, acc[1] / l, acc[2] / l, acc[3] / l);
            o[d8 + W] = make_float4(acc[4] / l, acc[5] / l, acc[6] / l, acc[7] / l);
        } else {
            float* row = part + (int64_t(h) * n_split + c) * (D + kPartPad);
            reinterpret_cast<float4*>(row)[d8] = make_float4(acc[0], acc[1], acc[2], acc[3]);
            reinterpret_cast<float4*>(row)[d8 + W] = make_float4(acc[4], acc[5], acc[6], acc[7]);
            if (d8 == 0) {
                row[D] = sm[g];
                row[D + 1] = l;
            }
        }
    }
}

// The fold of a head's splits in position order, for dims [32 blockIdx.y, +32) of head
// blockIdx.x. Splits come in chunks of 256: their m, l and acc go to shared memory (many loads in
// flight), the prefix max gives each split its M' and M, so both exp_det weights of every split
// are computed in parallel; 32 threads then run the fold, one fma per split and dim.
template <int D, Bug B>
__global__ void __launch_bounds__(kCombineThreads)
    decode_combine_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    __shared__ float s_scan[kCombineThreads], s_l[kCombineThreads], s_wa[kCombineThreads], s_wb[kCombineThreads];
    __shared__ float4 s_acc[kCombineThreads][kCombineDims / 4];
    const int t = threadIdx.x, h = blockIdx.x, d0 = blockIdx.y * kCombineDims;
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    const int last = B == Bug::skip_last_split ? n_split - 1 : n_split;
    float M = 0.0f, A = 0.0f, Ls = 0.0f;
    for (int base = 0; base < last; base += kCombineThreads) {
        const int nc = min(kCombineThreads, last - base);
        float m = -INFINITY, l = 0.0f;
        if (t < nc) {
            m = ph[int64_t(base + t) * (D + kPartPad) + D];
            l = ph[int64_t(base + t) * (D + kPartPad) + D + 1];
        }
        for (int i = t; i < nc * (kCombineDims / 4); i += kCombineThreads) {
            const int r = i / (kCombineDims / 4), w = i % (kCombineDims / 4);
            s_acc[r][w] = reinterpret_cast<const float4*>(ph + int64_t(base + r) * (D + kPartPad) + d0)[w];
        }
        s_l[t] = l;
        s_scan[t] = (t == 0 && base > 0) ? max_of(M, m) : m;
        __syncthreads();
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
        if (t < kCombineDims) {
            const float* acc = reinterpret_cast<const float*>(&s_acc[0][0]);
            for (int i = 0; i < nc; ++i) {
                const float x = acc[i * kCombineDims + t];
                if (base + i == 0) {
                    A = x;
                    Ls = s_l[0];
                } else {
                    A = fmaf(A, s_wa[i], x * s_wb[i]);
                    Ls = fmaf(Ls, s_wa[i], s_l[i] * s_wb[i]);
                }
            }
        }
        M = s_scan[nc - 1];
        __syncthreads();
    }
    if (t < kCombineDims) out[int64_t(h) * D + d0 + t] = A / Ls;
}

inline size_t prefill_smem_bytes(int D) {
    return size_t(2 * kBQ * (D + 4) + kBQ * (kSplit + 4) + 2 * kBQ) * 4;
}

// Prefill, one block per (64 queries = blockIdx.x, head = blockIdx.y). Per split: scores of the
// 64 x 128 tile in 64-key sub-tiles (thread (ty, tx) owns rows ty + 16a and keys tx + 16b, each
// a sequential fma chain over d), row max, p, then p.v in key order (thread owns rows ty + 16a
// and dims DT tx .. DT tx + DT-1), then the fold into the rows' state, all in registers.
template <int D, Bug B>
__global__ void __launch_bounds__(kPrefillThreads)
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
            for (int j = 0; j < nkt; ++j) {
                float p[4], v[DT];
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) p[a] = sS[(ty + 16 * a) * SP + kt * kBK + j];
                BITGATE_UNROLL
                for (int e = 0; e < DT; e += 4) {
                    const float4 x = *reinterpret_cast<const float4*>(sKV + j * DP + tx * DT + e);
                    v[e] = x.x, v[e + 1] = x.y, v[e + 2] = x.z, v[e + 3] = x.w;
                }
                BITGATE_UNROLL
                for (int a = 0; a < 4; ++a) {
                    BITGATE_UNROLL
                    for (int e = 0; e < DT; ++e) acc[a][e] = fmaf(p[a], v[e], acc[a][e]);
                    lsum[a] = lsum[a] + p[a];
                }
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
        float* o = out + ((i0 + r) * n_head + h) * D + tx * DT;
        BITGATE_UNROLL
        for (int e = 0; e < DT; e += 4)
            *reinterpret_cast<float4*>(o + e) =
                make_float4(A[a][e] / Ls[a], A[a][e + 1] / Ls[a], A[a][e + 2] / Ls[a], A[a][e + 3] / Ls[a]);
    }
}

}  // namespace bitgate::cuda::attn
