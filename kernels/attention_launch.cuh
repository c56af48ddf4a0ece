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
    if (D == 64) {
        cudaFuncSetAttribute(prefill_kernel<64, B>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        prefill_kernel<64, B><<<grid, kPrefillThreads, smem, stream>>>(q, kc, vc, n_q, L, ctx, int(n_head),
                                                                      int(n_kv_head), G, scale, out);
    } else {
        cudaFuncSetAttribute(prefill_kernel<128, B>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        prefill_kernel<128, B><<<grid, kPrefillThreads, smem, stream>>>(q, kc, vc, n_q, L, ctx, int(n_head),
                                                                       int(n_kv_head), G, scale, out);
    }
    return 1;
}

template <Bug B>
int launch_decode(const float* q, const uint16_t* kc, const uint16_t* vc, int64_t L, int64_t ctx, int64_t n_head,
                  int64_t n_kv_head, int64_t D, float* out, float* part, cudaStream_t stream) {
    const int n_split = int(attn_splits(L));
    const int G = int(n_head / n_kv_head);
    const float scale = attention_scale(D);
    const dim3 grid{unsigned(n_split), unsigned(n_kv_head)};
    const size_t smem = decode_smem_bytes(int(D), G);
    const dim3 cgrid{unsigned(n_head), unsigned(D / kCombineDims)};
    const int HC = decode_chunk(G);
    if (decode_uses_pipe(n_split, n_kv_head, G)) {  // the pipelined kernel: every head of the group in one pass
        const int per = int(decode_pipe_splits_per_block(n_split, n_kv_head));
        const dim3 pgrid{unsigned((n_split + per - 1) / per), unsigned(n_kv_head)};
        const size_t psmem = decode_pipe_smem_bytes(int(D), G);
        auto pipe = [&](auto kernel) {
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(psmem));
            kernel<<<pgrid, kPipeThreads, psmem, stream>>>(q, kc, vc, L, ctx, int(n_kv_head), G, scale, n_split, per,
                                                          part, out);
        };
        if (D == 64) {
            if (HC == 4) pipe(decode_pipe_kernel<64, 4, B>);
            else if (HC == 7) pipe(decode_pipe_kernel<64, 7, B>);
            else pipe(decode_pipe_kernel<64, 8, B>);
            if (n_split > 1) decode_combine_kernel<64, B><<<cgrid, kCombineThreads, 0, stream>>>(part, n_split, out);
        } else {
            if (HC == 4) pipe(decode_pipe_kernel<128, 4, B>);
            else if (HC == 7) pipe(decode_pipe_kernel<128, 7, B>);
            else pipe(decode_pipe_kernel<128, 8, B>);
            if (n_split > 1) decode_combine_kernel<128, B><<<cgrid, kCombineThreads, 0, stream>>>(part, n_split, out);
        }
        return n_split > 1 ? 2 : 1;
    }
    auto split = [&](auto kernel) {  // one split a block; more than 8 heads a group: passes of HC heads
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        kernel<<<grid, kDecodeThreads, smem, stream>>>(q, kc, vc, L, ctx, int(n_kv_head), G, scale, n_split, part, out);
    };
    if (D == 64) {
        if (HC == 4) split(decode_split_kernel<64, 4, B>);
        else if (HC == 7) split(decode_split_kernel<64, 7, B>);
        else split(decode_split_kernel<64, 8, B>);
        if (n_split > 1) decode_combine_kernel<64, B><<<cgrid, kCombineThreads, 0, stream>>>(part, n_split, out);
    } else {
        if (HC == 4) split(decode_split_kernel<128, 4, B>);
        else if (HC == 7) split(decode_split_kernel<128, 7, B>);
        else split(decode_split_kernel<128, 8, B>);
        if (n_split > 1) decode_combine_kernel<128, B><<<cgrid, kCombineThreads, 0, stream>>>(part, n_split, out);
    }
    return n_split > 1 ? 2 : 1;
}

}  // namespace bitgate::cuda::attn
