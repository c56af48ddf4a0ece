// The defective kv_store launcher behind mutants/kv_store.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// One launch, as cuda::kv_store_f16 but also writing position pos0 + n (its first 4 values, from
// the last token).
void kv_store_f16_one_past(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache,
                           int64_t ctx, int64_t pos0, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
