// Host model of kv_store_f16: f32 rows kv [n][n_kv_head][head_dim] -> f16 bits (round to nearest
// even, as __float2half_rn) into cache [n_kv_head][ctx][head_dim] at positions pos0 .. pos0+n-1.
// Every other byte of the cache is left as it was.
#pragma once
#include <cstdint>

namespace bitgate::ref {

void kv_store_f16(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache, int64_t ctx,
                  int64_t pos0);

}  // namespace bitgate::ref
