// Defective fused swiglu_q8_0 kernels, for the engine's mutants (mutants/swiglu_q8_0.cpp).
#pragma once

#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class SwigluQ8Defect {
    quantize_g,  // quantizes the gate input instead of the SwiGLU value
    skip_last,   // leaves the last Q8_0 block unwritten
};
// One launch, as cuda::swiglu_q8_0: the real kernel with the defect switched on.
void swiglu_q8_0_defective(SwigluQ8Defect defect, const float* g, const float* u, float* out, BlockQ8_0* xq,
                           int64_t n, int64_t f, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
