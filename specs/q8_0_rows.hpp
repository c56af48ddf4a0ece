// The Q8_0 output of the families that quantize [n][cols] rows for the decode projections
// (rms_norm_q8_0, swiglu_q8_0): n x cols/32 blocks, decoded as "token t block b" and the byte.
#pragma once
#include <string>

#include "bitgate/spec.hpp"

namespace bitgate::specs {

TensorSpec q8_0_rows(const std::string& name, const std::string& cols);

}  // namespace bitgate::specs
