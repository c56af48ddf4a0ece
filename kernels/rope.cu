#include "rope.cuh"

#include "bitgate/rope_table.hpp"
#include "pdl.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 128;

// One thread per (token, head group, pair i): cos and sin computed by the thread (the
// double-precision table, no libm: every thread of a (token, i) gets the same bits), then applied
// to pair i of each head of its group. Consecutive threads take consecutive i, so a warp reads and
// writes 32 consecutive floats of each half of a head. Each element is read and written by the
// same thread, so in and out may be the same buffer (no __restrict__), which also keeps the
// compiler from issuing one head's loads before the previous head's stores: a group is a chain of
// trips to memory, hence groups of one head where the tokens alone give few threads (decode:
// 64 threads and 28 + 4 heads, bench/RESULTS.md, 2026-12-04, eighth).
__global__ void rope_neox_kernel(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim,
                                 const int32_t* __restrict__ pos, float base, int64_t group) {
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int64_t half = head_dim / 2, groups = (n_head + group - 1) / group;
    const int64_t g = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (g >= n * groups * half) return;
    const int64_t i = g % half, tg = g / half, t = tg / groups, h0 = tg % groups * group;
    float c, s;
    rope_cos_sin(pos[t], i, head_dim, base, &c, &s);
    const int64_t h1 = h0 + group < n_head ? h0 + group : n_head;
    for (int64_t h = h0; h < h1; ++h) {
        const int64_t at = (t * n_head + h) * head_dim + i;
        const float x0 = in[at], x1 = in[at + half];
        out[at] = x0 * c - x1 * s;  // -fmad=false: each product rounded, then the difference
        out[at + half] = x0 * s + x1 * c;
    }
}

}  // namespace

void rope_neox_to(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                  float base, cudaStream_t stream) {
    const int64_t group = rope_heads_per_thread(n, n_head, head_dim);
    const int64_t threads = n * ((n_head + group - 1) / group) * (head_dim / 2);
    if (threads == 0) return;
    launch_dependent(rope_neox_kernel, dim3(unsigned((threads + kThreads - 1) / kThreads)), dim3(kThreads), 0, stream,
                     in, out, n, n_head, head_dim, pos, base, group);
}

}  // namespace bitgate::cuda
