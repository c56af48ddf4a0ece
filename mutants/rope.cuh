// The defective rope launcher behind mutants/rope.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// One launch, as cuda::rope_neox_to with sin and cos swapped.
void rope_neox_to_swapped(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim, const int32_t* pos,
                          float base, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
