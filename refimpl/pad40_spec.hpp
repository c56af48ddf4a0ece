// Tensor descriptions shared by the families that write the quantize_pad40_t plane (the
// standalone quantizer and the fused norm and SwiGLU): an [n][features] f32 activation and the
// two planes, with decoders that name token block, chunk, token, word and byte.
#pragma once
#include <string>

#include "bitgate/spec.hpp"

namespace bitgate::ref {

// f32 [n][cols] input drawn from the case's profile (rows of `cols` channels).
TensorSpec pad40_input(const std::string& name, const std::string& cols);
// f32 [n][cols] output, decoded as "token t feature i".
TensorSpec pad40_f32_output(const std::string& name, const std::string& cols);
// The planes of an [n][cols] activation.
TensorSpec pad40_qs_tensor(const std::string& cols);
TensorSpec pad40_sda_tensor(const std::string& cols);

}  // namespace bitgate::ref
