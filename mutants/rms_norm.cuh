// Defective fused rms_norm kernels, for the engine's mutants (mutants/rms_norm.cpp).
#pragma once

#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda {

namespace mutants {

// The defects the engine must catch (mutants/rms_norm.cpp): one launch, as cuda::rms_norm_quant_f32_t.
enum class RmsNormDefect {
    rsqrtf,           // scale from rsqrtf
    tail_unwritten,   // the padded tokens' plane bytes unwritten
    other_block_row,  // quantizes y of row+8, read back from global
};
void rms_norm_quant_f32_t_defective(RmsNormDefect defect, const float* x, const float* w, float* y, int64_t n, int64_t d,
                                    uint8_t* qs, uint32_t* sda, cudaStream_t stream);

}  // namespace mutants


}  // namespace bitgate::cuda
