// The defective attention launchers behind mutants/attention.cpp: the real kernels
// (kernels/attention_kernels.cuh) with one defect switched on.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class AttentionDefect {
    non_causal,       // prefill: every row of a tile sees the keys up to the tile's last position
    kv_head_mod,      // head h reads kv head h % n_kv_head (decode: the groups are round-robin)
    tail_unwritten,   // prefill: the last query's row of out never written
    skip_last_split,  // decode: the combine folds every split but the last
    read_past_L,      // decode: the last split reads cache rows up to ctx
};

// As cuda::attention_prefill and cuda::attention_decode with the defect; the launches made.
int attention_prefill_defective(AttentionDefect defect, const float* q, const uint16_t* k_cache,
                                const uint16_t* v_cache, int64_t n_q, int64_t L, int64_t ctx, int64_t n_head,
                                int64_t n_kv_head, int64_t head_dim, float* out, cudaStream_t stream);
int attention_decode_defective(AttentionDefect defect, const float* q, const uint16_t* k_cache, const uint16_t* v_cache,
                               int64_t L, int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                               float* work, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
