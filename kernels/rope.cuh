// rope: NEOX rotary embedding (as llama.cpp applies it to qwen2) on x [n][n_head][head_dim],
// token t at position pos[t] (0 .. 32767), cos and sin from bitgate/rope_table.hpp. One launch;
// head_dim even. rope_neox is in place; rope_neox_to writes out (which may be in).
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

namespace bitgate::cuda {

// Heads a thread rotates, by shape (scheduling only: each head's bytes are the same either way):
// all of a token's where the tokens give at least 16,384 threads (a pair each), else one.
constexpr int64_t rope_heads_per_thread(int64_t n, int64_t n_head, int64_t head_dim) {
    return n * (head_dim / 2) >= 16384 ? (n_head > 0 ? n_head : 1) : 1;
}

void rope_neox_to(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                  float base, cudaStream_t stream);

inline void rope_neox(float* x, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos, float base,
                      cudaStream_t stream) {
    rope_neox_to(x, x, n, n_head, head_dim, pos, base, stream);
}

}  // namespace bitgate::cuda
