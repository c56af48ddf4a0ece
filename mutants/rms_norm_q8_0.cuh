// Defective fused rms_norm_q8_0 kernels, for the engine's mutants (mutants/rms_norm_q8_0.cpp).
#pragma once

#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class RmsNormQ8Defect {
    quantize_x,  // quantizes the input row instead of y
    last_block,  // leaves each row's last Q8_0 block unwritten
};
// One launch, as cuda::rms_norm_q8_0: the real kernel with the defect switched on.
void rms_norm_q8_0_defective(RmsNormQ8Defect defect, const float* x, const float* w, float* y, BlockQ8_0* xq,
                             int64_t n, int64_t d, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
