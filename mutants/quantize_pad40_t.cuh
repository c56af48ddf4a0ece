// The defective quantize_pad40_t launcher behind mutants/quantize_pad40_t.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class Pad40Defect {
    tail_unwritten,  // padded tokens t >= n are skipped instead of zero-filled
    no_xor,          // the swizzle's xor dropped
    roundf,          // ties away from zero instead of rintf's ties to even
};

// One launch, as cuda::quantize_pad40_t with the defect.
void quantize_pad40_t_defective(Pad40Defect defect, const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda,
                                cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
