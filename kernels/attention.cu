#include "attention.cuh"

#include "attention_launch.cuh"
#include "bitgate/attention_order.hpp"

namespace bitgate::cuda {

size_t attention_decode_workspace_bytes(int64_t L, int64_t n_head, int64_t head_dim) {
    const int64_t splits = attn_splits(L);
    return splits > 1 ? size_t(n_head * splits * (head_dim + attn::kPartPad)) * 4 : 0;
}

int attention_prefill(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                      int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                      cudaStream_t stream) {
    return attn::launch_prefill<attn::Bug::none>(q, k_cache, v_cache, n_q, L, ctx, n_head, n_kv_head, head_dim, out,
                                                 stream);
}

int attention_decode(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t L, int64_t ctx,
                     int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out, float* work,
                     cudaStream_t stream) {
    return attn::launch_decode<attn::Bug::none>(q, k_cache, v_cache, L, ctx, n_head, n_kv_head, head_dim, out, work,
                                                stream);
}

void attention_f16kv(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                     int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                     cudaStream_t stream) {
    // Both paths follow the one order: the choice changes the speed, never a bit.
    if (n_q != 1 || n_head / n_kv_head > 64) {
        attention_prefill(q, k_cache, v_cache, n_q, L, ctx, n_head, n_kv_head, head_dim, out, stream);
        return;
    }
    const size_t bytes = attention_decode_workspace_bytes(L, n_head, head_dim);
    void* work = nullptr;
    if (bytes) cudaMallocAsync(&work, bytes, stream);
    attention_decode(q, k_cache, v_cache, L, ctx, n_head, n_kv_head, head_dim, out, static_cast<float*>(work), stream);
    if (bytes) cudaFreeAsync(work, stream);
}

}  // namespace bitgate::cuda
