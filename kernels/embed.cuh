// embed: token ids -> f32 rows [n][d] from a [n_vocab][d] table in f32, f16 or Q8_0 (ggml's
// dequantize_row_q8_0: (float)d * (float)q). One launch each; d a multiple of 4 (Q8_0: of 32),
// out 16-byte aligned. The ids must be in [0, n_vocab): the caller validates them
// (ref::embed_ids_problem); the kernel reads exactly the n rows the ids name.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

void embed_q8_0(const BlockQ8_0* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream);
void embed_f16(const uint16_t* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream);
void embed_f32(const float* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream);

}  // namespace bitgate::cuda
