#include "embed.hpp"

#include <cstring>

#include "bitgate/f16.hpp"

namespace bitgate::ref {

std::string embed_ids_problem(const int32_t* ids, int64_t n, int64_t n_vocab) {
    for (int64_t t = 0; t < n; ++t)
        if (ids[t] < 0 || ids[t] >= n_vocab)
            return "token " + std::to_string(t) + ": id " + std::to_string(ids[t]) + " is outside [0, " +
                   std::to_string(n_vocab) + ")";
    return "";
}

void embed_q8_0(const BlockQ8_0* table, int64_t d, const int32_t* ids, int64_t n, float* out) {
    const int64_t nb = d / QK8_0;
    for (int64_t t = 0; t < n; ++t) {
        const BlockQ8_0* row = table + int64_t(ids[t]) * nb;
        for (int64_t b = 0; b < nb; ++b) {
            const float scale = f16_to_f32(row[b].d);
            for (int j = 0; j < QK8_0; ++j) out[t * d + b * QK8_0 + j] = float(row[b].qs[j]) * scale;
        }
    }
}

void embed_f16(const uint16_t* table, int64_t d, const int32_t* ids, int64_t n, float* out) {
    for (int64_t t = 0; t < n; ++t)
        for (int64_t c = 0; c < d; ++c) out[t * d + c] = f16_to_f32(table[int64_t(ids[t]) * d + c]);
}

void embed_f32(const float* table, int64_t d, const int32_t* ids, int64_t n, float* out) {
    for (int64_t t = 0; t < n; ++t) std::memcpy(out + t * d, table + int64_t(ids[t]) * d, size_t(d) * 4);
}

}  // namespace bitgate::ref
