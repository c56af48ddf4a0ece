// Host model of rope_neox: NEOX rotary embedding as llama.cpp applies it to qwen2, in place on
// x [n][n_head][head_dim]; token t at position pos[t]. Pair (i, i + head_dim/2) of every head
// turns by theta = pos * base^(-2i/head_dim), cos and sin from bitgate/rope_table.hpp:
//   out_i          = x_i * cos - x_{i+h/2} * sin
//   out_{i+h/2}    = x_i * sin + x_{i+h/2} * cos
// each product rounded, then the sum (no FMA), the order of ggml's rope_f32 NEOX path.
#pragma once
#include <cstdint>
#include <string>

namespace bitgate::ref {

// Positions the table is proven for (docs/rope.md): 0 .. kRopeMaxPos.
constexpr int32_t kRopeMaxPos = 32767;

// "" when every position is in [0, kRopeMaxPos], else "token T: position P is outside [0, 32767]".
std::string rope_pos_problem(const int32_t* pos, int64_t n);

// in -> out; out may be in (the in-place call).
void rope_neox_to(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                  float base);

inline void rope_neox(float* x, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos, float base) {
    rope_neox_to(x, x, n, n_head, head_dim, pos, base);
}

}  // namespace bitgate::ref
