// rope: NEOX rotary embedding (as llama.cpp applies it to qwen2) on x [n][n_head][head_dim],
// token t at position pos[t] (0 .. 32767), cos and sin from bitgate/rope_table.hpp. One launch;
// head_dim even. rope_neox is in place; rope_neox_to writes out (which may be in).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

void rope_neox_to(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                  float base, cudaStream_t stream);

inline void rope_neox(float* x, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos, float base,
                      cudaStream_t stream) {
    rope_neox_to(x, x, n, n_head, head_dim, pos, base, stream);
}

}  // namespace bitgate::cuda
