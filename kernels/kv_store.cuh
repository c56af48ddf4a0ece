// kv_store: f32 rows kv [n][n_kv_head][head_dim] -> f16 bits (__float2half_rn) into cache
// [n_kv_head][ctx][head_dim] at positions pos0 .. pos0+n-1; no other cache byte is written.
// One launch; head_dim a multiple of 4, kv 16-byte and cache 8-byte aligned, pos0 + n <= ctx.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

void kv_store_f16(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache, int64_t ctx,
                  int64_t pos0, cudaStream_t stream);

}  // namespace bitgate::cuda
