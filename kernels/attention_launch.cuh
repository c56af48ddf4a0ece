// The attention launchers, shared by the real kernels (kernels/attention.cu, Bug::none) and the
// mutants (mutants/attention.cu).
#pragma once
#include <cuda_runtime.h>

#include "attention_kernels.cuh"
#include "bitgate/attention_order.hpp"

namespace bitgate::cuda::attn {

template <Bug B>
int launch_prefill(const float* q, const uint16_t* kc, const uint16_t* vc, int64_t n_q, int64_t L, int64_t ctx,
                   int64_t n_head, int64_t n_kv_head, int64_t D, float* out, cudaStream_t stream) {
    const dim3 grid{unsigned((n_q + kBQ - 1) / kBQ), unsigned(n_head)};
    const float scale = attention_scale(D);
    const int G = int(n_head / n_kv_head);
    const size_t smem = prefill_smem_bytes(int(D));
    // The kernel for a head dim and MG (prefill_multi_group, by shape): every choice folds in the one order.
    auto run = [&](auto kernel) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        kernel<<<grid, kPrefillThreads, smem, stream>>>(q, kc, vc, n_q, L, ctx, int(n_head), int(n_kv_head), G, scale,
                                                        out);
    };
    const bool mg = prefill_multi_group(L);
    if (D == 64)
        mg ? run(prefill_kernel<64, B, true>) : run(prefill_kernel<64, B, false>);
    else
        mg ? run(prefill_kernel<128, B, true>) : run(prefill_kernel<128, B, false>);
    return 1;
}

// Decode for one head dim: the split kernel (64 or 128 threads a block: decode_split_threads) or
// the pipelined one (decode_uses_pipe), with the passes of HC heads the group takes, then the fold
// of the splits when there is more than one.
template <int D, Bug B>
int launch_decode_d(const float* q, const uint16_t* kc, const uint16_t* vc, int64_t L, int64_t ctx, int64_t n_head,
                    int64_t n_kv_head, float* out, float* part, cudaStream_t stream) {
    const int n_split = int(attn_splits(L));
    const int G = int(n_head / n_kv_head), HC = decode_chunk(G);
    const float scale = attention_scale(D);
    const auto by_chunk = [&](auto k4, auto k7, auto k8, auto launch) {
        if (HC == 4) launch(k4);
        else if (HC == 7) launch(k7);
        else launch(k8);
    };
    bool piped = false;
    if constexpr (D <= 64) {  // the pipelined kernel serves head_dim 64 only (decode_uses_pipe)
        if (decode_uses_pipe(n_split, n_kv_head, G, D)) {
            const int per = int(decode_pipe_splits_per_block(n_split, n_kv_head));
            const dim3 grid{unsigned((n_split + per - 1) / per), unsigned(n_kv_head)};
            const size_t smem = decode_pipe_smem_bytes(D, G);
            by_chunk(decode_pipe_kernel<D, 4, B>, decode_pipe_kernel<D, 7, B>, decode_pipe_kernel<D, 8, B>,
                     [&](auto kernel) {
                         cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
                         kernel<<<grid, kPipeThreads, smem, stream>>>(q, kc, vc, L, ctx, int(n_kv_head), G, scale,
                                                                      n_split, per, part, out);
                     });
            piped = true;
        }
    }
    if (!piped) {
        const dim3 grid{unsigned(n_split), unsigned(n_kv_head)};
        with_split_threads<D>(decode_split_threads(n_split, n_kv_head, D), [&](auto threads) {
            constexpr int T = decltype(threads)::value;
            const size_t smem = decode_smem_bytes(D, G, T);
            by_chunk(decode_split_kernel<D, 4, T, B>, decode_split_kernel<D, 7, T, B>, decode_split_kernel<D, 8, T, B>,
                     [&](auto kernel) {
                         cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
                         kernel<<<grid, T, smem, stream>>>(q, kc, vc, L, ctx, int(n_kv_head), G, scale, n_split, part,
                                                           out);
                     });
        });
    }
    if (n_split == 1) return 1;
    const dim3 cgrid{unsigned(n_head), unsigned(D / kCombineDims)};
    const CombineLaunch combine = combine_for<D, B>(n_split);
    launch_dependent(combine.kernel, cgrid, dim3(combine.threads), 0, stream, part, n_split, out);
    return 2;
}

template <Bug B>
int launch_decode(const float* q, const uint16_t* kc, const uint16_t* vc, int64_t L, int64_t ctx, int64_t n_head,
                  int64_t n_kv_head, int64_t D, float* out, float* part, cudaStream_t stream) {
    return D == 64 ? launch_decode_d<64, B>(q, kc, vc, L, ctx, n_head, n_kv_head, out, part, stream)
                   : launch_decode_d<128, B>(q, kc, vc, L, ctx, n_head, n_kv_head, out, part, stream);
}

}  // namespace bitgate::cuda::attn
