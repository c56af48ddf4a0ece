// Tensor descriptions shared by the families that write the quantize_pad40_t plane (the
// standalone quantizer, the fused norm and SwiGLU, the prefill chain): an [n][features] f32 activation and the
// two planes, with decoders that name token block, chunk, token, word and byte.
#pragma once
#include <string>

#include "bitgate/spec.hpp"

namespace bitgate::specs {

// f32 [n][cols] input drawn from the case's profile (rows of `cols` channels).
TensorSpec pad40_input(const std::string& name, const std::string& cols);
// f32 [n][cols] output, decoded as "token t feature i".
TensorSpec pad40_f32_output(const std::string& name, const std::string& cols);
// The planes of an [n][cols] activation.
TensorSpec pad40_qs_tensor(const std::string& cols);
TensorSpec pad40_sda_tensor(const std::string& cols);

// The norm weight input [cols] of the families that apply rms_norm (rms_norm, prefill_chain):
// near 1 whatever the profile, 1 + u/2 with u in [-1, 1).
TensorSpec rms_norm_weight(const std::string& name, const std::string& cols);

}  // namespace bitgate::specs
