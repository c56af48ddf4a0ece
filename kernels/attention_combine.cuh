// Decode attention, the fold of the splits in the order's two levels: a warp kernel for one group,
// a block kernel for more, and which of them a shape takes.
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

constexpr int kCombineDims = 32;    // dims per combine warp: a lane a dim
constexpr int kCombineGroupWarps = 8;  // warps of the group kernel's blocks: a group a warp

// Splits 0 .. n-1 of `ph` (rows of part, 1 <= n <= 32) folded in position order, split 0 starting
// the state: lane `lane` of the warp returns dim d's A, every lane the run's M and Ls. Lane c holds
// split c's m and l: a prefix max by shuffles (exact in any order) gives every split its M and M',
// so both weights of every split come out in parallel; then each lane runs its dim's chain with
// split c's weights taken from lane c, every acc load issued before the first fma. No shared memory,
// no block barrier.
template <int D>
__device__ __forceinline__ void fold_run(const float* __restrict__ ph, int n, int lane, int d, float& M, float& Ls,
                                         float& A) {
    static_assert(kCombineDims == 32, "a lane a dim, a lane a split");
    float m = -INFINITY, l = 0.0f;
    if (lane < n) {
        m = ph[int64_t(lane) * (D + kPartPad) + D];
        l = ph[int64_t(lane) * (D + kPartPad) + D + 1];
    }
    float x[32];  // acc of every split at dim d
    BITGATE_UNROLL
    for (int c = 0; c < 32; ++c) x[c] = c < n ? ph[int64_t(c) * (D + kPartPad) + d] : 0.0f;
    float Mn = m;  // M' of split `lane`: the max of m over splits 0 .. lane
    BITGATE_UNROLL
    for (int off = 1; off < 32; off <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, Mn, off);
        if (lane >= off) Mn = decode_max(Mn, y);
    }
    const float Mo = __shfl_up_sync(0xffffffffu, Mn, 1);  // M before split `lane` (unused at 0)
    // Both arguments <= 0 (Mn is the max), as exp_det_nonpos asks.
    const float wa = exp_det_nonpos(Mo - Mn), wb = exp_det_nonpos(m - Mn), lb = l * wb;
    A = x[0], Ls = __shfl_sync(0xffffffffu, l, 0);  // split 0 starts the state
    BITGATE_UNROLL
    for (int c = 1; c < 32; ++c) {
        const float a = __shfl_sync(0xffffffffu, wa, c), b = __shfl_sync(0xffffffffu, wb, c);
        const float lbc = __shfl_sync(0xffffffffu, lb, c);
        if (c < n) {
            A = fmaf(A, a, x[c] * b);
            Ls = fmaf(Ls, a, lbc);
        }
    }
    M = __shfl_sync(0xffffffffu, Mn, n - 1);
}

// The fold for caches of one group (up to 32 splits): one warp per (head, 32 dims). Launched as
// dependent of the split kernel (kernels/pdl.cuh), so its launch overlaps the split kernel's last
// blocks. At 7B, L = 4096 (32 splits) the pair with it took 9.75 us against 11.03 with a block
// kernel whose 256 threads spent their barriers on a prefix max over 256 slots (bench/RESULTS.md,
// 2026-12-04, fifth).
template <int D, Bug B>
__global__ void __launch_bounds__(32)
    decode_combine_warp_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    const int lane = threadIdx.x, h = blockIdx.x, d = blockIdx.y * kCombineDims + lane;
    wait_then_allow_dependents();  // part is complete after this
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    const int n = B == Bug::skip_last_split ? n_split - 1 : n_split;  // 2 <= n_split <= 32
    float M, Ls, A;
    fold_run<D>(ph, n, lane, d, M, Ls, A);
    out[int64_t(h) * D + d] = A / Ls;
}

// The fold for caches of more than one group: one block of 8 warps per (head, 32 dims). Warp w
// folds groups w, w + 8, ... as fold_run does (level one, the groups side by side); after each
// round warp 0 folds the round's group states into the whole in group order (level two). At 7B
// and L = 32768 that is 8 runs of 32 splits at once and a fold of 8 states, where the one-level
// order asked for a single chain of 256 splits.
template <int D, Bug B>
__global__ void __launch_bounds__(32 * kCombineGroupWarps)
    decode_combine_groups_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    static_assert(kAttnFoldGroup == 32, "a group a warp, a split a lane");
    constexpr int W = kCombineGroupWarps;
    __shared__ float s_m[W], s_l[W], s_a[W][kCombineDims];
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, h = blockIdx.x, d = blockIdx.y * kCombineDims + lane;
    wait_then_allow_dependents();  // part is complete after this
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    const int n = B == Bug::skip_last_split ? n_split - 1 : n_split;
    const int n_group = (n + 31) / 32;
    float M = 0.0f, Ls = 0.0f, A = 0.0f;
    for (int g0 = 0; g0 < n_group; g0 += W) {
        const int g = g0 + w;
        if (g < n_group) {
            float gm, gl, ga;
            fold_run<D>(ph + int64_t(g) * 32 * (D + kPartPad), min(32, n - 32 * g), lane, d, gm, gl, ga);
            s_a[w][lane] = ga;
            if (lane == 0) s_m[w] = gm, s_l[w] = gl;
        }
        __syncthreads();
        if (w == 0) {
            BITGATE_UNROLL
            for (int j = 0; j < W; ++j) {
                if (g0 + j >= n_group) break;
                const float m = s_m[j], l = s_l[j], x = s_a[j][lane];
                if (g0 + j == 0) {  // group 0 starts the state
                    M = m, Ls = l, A = x;
                } else {
                    const float Mn = decode_max(M, m);
                    const float a = exp_det_nonpos(M - Mn), b = exp_det_nonpos(m - Mn);  // both <= 0
                    Ls = fmaf(Ls, a, l * b);
                    A = fmaf(A, a, x * b);
                    M = Mn;
                }
            }
        }
        __syncthreads();
    }
    if (w == 0) out[int64_t(h) * D + d] = A / Ls;
}

// The combine a cache of n_split splits takes, for the launcher and the CPU test alike
// (scheduling only: both fold in the one order). Grid: (heads, head_dim / 32).
struct CombineLaunch {
    void (*kernel)(const float*, int, float*);
    int threads;
};
template <int D, Bug B>
constexpr CombineLaunch combine_for(int n_split) {
    if (n_split <= kAttnFoldGroup) return {decode_combine_warp_kernel<D, B>, 32};
    return {decode_combine_groups_kernel<D, B>, 32 * kCombineGroupWarps};
}

}  // namespace bitgate::cuda::attn
