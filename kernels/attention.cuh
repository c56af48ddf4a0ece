// attention: causal GQA softmax attention over an F16 KV cache, in the order of
// docs/attention.md (refimpl/attention.hpp is its host model). Shapes as bitgate::ref::attention_f16kv:
// q [n_q][n_head][head_dim] f32, caches [n_kv_head][ctx][head_dim] f16 bits with L valid
// positions, out [n_q][n_head][head_dim] f32; head_dim 64 or 128. q, the caches and out 16-byte
// aligned. No cache position >= L is read.
#pragma once
#include "bitgate/stream.hpp"

#include <cstddef>
#include <cstdint>

namespace bitgate::cuda {

// Bytes of the decode path's partial results (0 when it needs none: one split).
size_t attention_decode_workspace_bytes(int64_t L, int64_t n_head, int64_t head_dim);

// Prefill kernel, any 1 <= n_q <= L: one block per (64 queries, head). 1 launch.
int attention_prefill(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                      int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                      cudaStream_t stream);

// Decode, n_q = 1 and n_head / n_kv_head <= 64: one block per (split of 128 keys, kv head), then
// one combine launch folding the splits (into out) unless there is one split. work holds
// attention_decode_workspace_bytes. 1 or 2 launches.
int attention_decode(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t L, int64_t ctx,
                     int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out, float* work,
                     cudaStream_t stream);

// What the forward pass calls: decode for n_q = 1 (its workspace taken from the stream's pool
// and given back in stream order), prefill otherwise. Same bytes as the host model either way.
void attention_f16kv(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                     int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                     cudaStream_t stream);

}  // namespace bitgate::cuda
