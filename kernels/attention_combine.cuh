// Decode attention, the fold of the splits in the order's two levels: a warp kernel for one group,
// a block kernel for more, and which of them a shape takes.
#pragma once
#include "attention_common.cuh"

namespace bitgate::cuda::attn {

constexpr int kCombineDims = 32;    // dims per combine warp: a lane a dim
constexpr int kCombineGroupWarps = 8;  // warps of the group kernel's blocks: a group a warp

// Rows 0 .. n-1 of `rows` (1 <= n <= 32; a row holds a state's A at columns 0 .. , its m at
// column MOFF and its l at MOFF + 1, rows STRIDE floats apart) folded in position order, row 0
// starting the state: lane `lane` returns column `col`'s A, every lane the run's M and Ls. Lane c
// holds row c's m and l: a prefix max by shuffles (exact in any order) gives every row its M and
// M', so both weights of every row come out in parallel; then each lane runs its column's chain
// with row c's weights taken from lane c, every load issued before the first fma. No shared
// memory of its own, no block barrier. `warm` runs the same instructions with every load
// predicated off (the warm pass of decode_combine_groups_kernel); no bit depends on it.
template <int STRIDE, int MOFF>
__device__ __forceinline__ void fold_rows(const float* __restrict__ rows, int n, int lane, int col, bool warm,
                                          float& M, float& Ls, float& A) {
    static_assert(kCombineDims == 32, "a lane a column, a lane a row");
    float m = warm ? 0.0f : -INFINITY, l = 0.0f;  // warm: zeros, so that no exp_det meets a NaN
    if (lane < n && !warm) {
        m = rows[int64_t(lane) * STRIDE + MOFF];
        l = rows[int64_t(lane) * STRIDE + MOFF + 1];
    }
    float x[32];  // A (or acc) of every row at column col
    BITGATE_UNROLL
    for (int c = 0; c < 32; ++c) x[c] = c < n && !warm ? rows[int64_t(c) * STRIDE + col] : 0.0f;
    float Mn = m;  // M' of row `lane`: the max of m over rows 0 .. lane
    BITGATE_UNROLL
    for (int off = 1; off < 32; off <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, Mn, off);
        if (lane >= off) Mn = decode_max(Mn, y);
    }
    const float Mo = __shfl_up_sync(0xffffffffu, Mn, 1);  // M before row `lane` (unused at 0)
    // Both arguments <= 0 (Mn is the max), as exp_det_nonpos asks.
    const float wa = exp_det_nonpos(Mo - Mn), wb = exp_det_nonpos(m - Mn), lb = l * wb;
    A = x[0], Ls = __shfl_sync(0xffffffffu, l, 0);  // row 0 starts the state
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

// Splits 0 .. n-1 of `ph` (rows of part, 1 <= n <= 32) folded in position order: lane `lane`
// returns dim d's A.
template <int D>
__device__ __forceinline__ void fold_run(const float* __restrict__ ph, int n, int lane, int d, float& M, float& Ls,
                                         float& A, bool warm = false) {
    fold_rows<D + kPartPad, D>(ph, n, lane, d, warm, M, Ls, A);
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
// round warp 0 folds the round's group states into the whole in group order (level two), with the
// same parallel weights (fold_rows over the states in shared memory; from the second round on,
// the whole so far is the first row, which folds as the sequential fold would). At 7B and
// L = 32768 that is 8 runs of 32 splits at once and a fold of 8 states, where the one-level order
// asked for a single chain of 256 splits. The kernel runs once on each SM after the split kernel's
// last block, so its code would be fetched cold there: it first runs a round of the same code on
// no data (every load predicated off, nothing stored) before its wait, while the split kernel
// still runs, as the one-level combine did (bench/RESULTS.md, 2026-12-04). No bit depends on it.
template <int D, Bug B>
__global__ void __launch_bounds__(32 * kCombineGroupWarps)
    decode_combine_groups_kernel(const float* __restrict__ part, int n_split, float* __restrict__ out) {
    static_assert(kAttnFoldGroup == 32, "a group a warp, a split a lane");
    constexpr int W = kCombineGroupWarps, SR = kCombineDims + 2;  // a state row: A[32], M, Ls
    __shared__ float s_st[W + 1][SR];  // row 0: the whole so far (rounds after the first); 1 + w: warp w's group
    const int lane = threadIdx.x % 32, w = threadIdx.x / 32, h = blockIdx.x, d = blockIdx.y * kCombineDims + lane;
    const float* ph = part + int64_t(h) * n_split * (D + kPartPad);
    BITGATE_NO_UNROLL
    for (int pass = 0; pass < 2; ++pass) {
        const bool warm = pass == 0;
        if (!warm) wait_then_allow_dependents();  // part is complete after this
        const int n = warm ? 32 * W : B == Bug::skip_last_split ? n_split - 1 : n_split;
        const int n_group = (n + 31) / 32;
        float M = 0.0f, Ls = 0.0f, A = 0.0f;
        for (int g0 = 0; g0 < n_group; g0 += W) {
            const int g = g0 + w;
            if (g < n_group) {
                float gm, gl, ga;
                fold_run<D>(ph + int64_t(g) * 32 * (D + kPartPad), min(32, n - 32 * g), lane, d, gm, gl, ga, warm);
                s_st[1 + w][lane] = ga;
                if (lane == 0) s_st[1 + w][kCombineDims] = gm, s_st[1 + w][kCombineDims + 1] = gl;
            }
            __syncthreads();
            if (w == 0) {
                const int first = g0 == 0 ? 1 : 0;  // group 0 starts the whole; later, the whole is row 0
                fold_rows<SR, kCombineDims>(&s_st[first][0], 1 - first + min(W, n_group - g0), lane, lane, false, M,
                                            Ls, A);
                s_st[0][lane] = A;
                if (lane == 0) s_st[0][kCombineDims] = M, s_st[0][kCombineDims + 1] = Ls;
            }
            __syncthreads();
        }
        if (w == 0 && !warm) out[int64_t(h) * D + d] = A / Ls;
    }
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
