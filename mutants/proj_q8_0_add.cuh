// The defective proj_q8_0_add launcher behind mutants/proj_q8_0_add.cpp.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// The fused projection whose addend joins lane 0's first partial sum before the warp tree: every
// row written, the addend rounded into the sum at another place (1 launch).
int proj_q8_0_add_early(const BlockQ8_0* w, const BlockQ8_0* xq, const float* add, float* y, int64_t n, int64_t k,
                        cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
