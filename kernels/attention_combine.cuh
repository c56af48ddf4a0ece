// Decode attention, the fold of the splits in position order: a block kernel, a warp kernel,
// and which of them a shape takes.
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

constexpr int kCombineThreads = 256;
constexpr int kCombineDims = 32;  // dims per combine block

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
            s_scan[t] = (t == 0 && base > 0) ? decode_max(M, m) : m;
            const bool fold_only = W == Warm::fold && warm;
            if (fold_only) s_wa[t] = s_wb[t] = 0.0f;
            __syncthreads();
            if (!fold_only) {
                for (int off = 1; off < kCombineThreads; off <<= 1) {  // inclusive prefix max
                    const float y = t >= off ? s_scan[t - off] : -INFINITY;
                    __syncthreads();
                    s_scan[t] = decode_max(s_scan[t], y);
                    __syncthreads();
                }
                if (t < nc) {
                    const float Mn = s_scan[t], Mo = t == 0 ? M : s_scan[t - 1];
                    s_wa[t] = exp_det_nonpos(Mo - Mn);  // both <= 0 (Mn the max)
                    s_wb[t] = exp_det_nonpos(m - Mn);
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
        if (lane >= off) Mn = decode_max(Mn, y);
    }
    const float Mo = __shfl_up_sync(0xffffffffu, Mn, 1);  // M before split `lane` (unused at 0)
    // Both arguments <= 0 (Mn is the max), as exp_det_nonpos asks.
    const float wa = exp_det_nonpos(Mo - Mn), wb = exp_det_nonpos(m - Mn), lb = l * wb;
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

}  // namespace bitgate::cuda::attn
