#include "rope.hpp"

#include "bitgate/rope_table.hpp"

namespace bitgate::ref {

std::string rope_pos_problem(const int32_t* pos, int64_t n) {
    for (int64_t t = 0; t < n; ++t)
        if (pos[t] < 0 || pos[t] > kRopeMaxPos)
            return "token " + std::to_string(t) + ": position " + std::to_string(pos[t]) + " is outside [0, " +
                   std::to_string(kRopeMaxPos) + "]";
    return "";
}

void rope_neox_to(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                  float base) {
    const int64_t half = head_dim / 2;
    for (int64_t t = 0; t < n; ++t)
        for (int64_t i = 0; i < half; ++i) {
            float c, s;
            rope_cos_sin(pos[t], i, head_dim, base, &c, &s);
            for (int64_t h = 0; h < n_head; ++h) {
                const int64_t at = (t * n_head + h) * head_dim + i;
                const float x0 = in[at], x1 = in[at + half];
                out[at] = x0 * c - x1 * s;
                out[at + half] = x0 * s + x1 * c;
            }
        }
}

}  // namespace bitgate::ref
