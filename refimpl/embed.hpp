// Host models of embed: token ids -> f32 rows [n][d] gathered from an embedding table of
// [n_vocab][d] values in f32, f16 or Q8_0 (ggml's dequantize_row_q8_0: y = (float)d * (float)q).
// Ids are validated by the caller (embed_ids_problem); the models never read outside the table.
#pragma once
#include <cstdint>
#include <string>

#include "bitgate/formats.hpp"

namespace bitgate::ref {

// "" when every id is in [0, n_vocab), else "token T: id X is outside [0, n_vocab)".
std::string embed_ids_problem(const int32_t* ids, int64_t n, int64_t n_vocab);

void embed_q8_0(const BlockQ8_0* table, int64_t d, const int32_t* ids, int64_t n, float* out);
void embed_f16(const uint16_t* table, int64_t d, const int32_t* ids, int64_t n, float* out);
void embed_f32(const float* table, int64_t d, const int32_t* ids, int64_t n, float* out);

}  // namespace bitgate::ref
