// The defective swiglu launcher behind mutants/swiglu.cpp.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class SwigluDefect {
    tail_unwritten,  // the padded tokens' plane bytes unwritten
    no_xor,          // the swizzle's xor dropped
    expf,            // SiLU with __expf instead of exp_det
};

// One launch, as cuda::swiglu_quant_f32_t with the defect.
void swiglu_quant_f32_t_defective(SwigluDefect defect, const float* g, const float* u, float* out, int64_t n, int64_t f,
                                  uint8_t* qs, uint32_t* sda, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
