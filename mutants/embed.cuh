// The defective embed launcher behind mutants/embed.cpp.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// One launch, as cuda::embed_q8_0 but reading row (id + 1) % vocab instead of row id.
void embed_q8_0_wrong_row(const BlockQ8_0* table, int64_t vocab, int64_t d, const int32_t* ids, int64_t n, float* out,
                          cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
