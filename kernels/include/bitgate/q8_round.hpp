// Rounding of a scaled value to a Q8_0 byte, shared by the host model and the kernel.
#pragma once
#include <cmath>
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate {

// ggml's quantize_row_q8_0_ref stores (int8_t)roundf(x * id): roundf ties away from zero. That
// cast is undefined in C when x * id is not finite, which happens only when 1/d overflowed for a
// subnormal block maximum; here NaN stores 0 and anything beyond +-127 stores +-127, on both
// sides, so the bytes are defined for every finite input. Within [-127, 127] this is exactly
// ggml's value.
BITGATE_HD int8_t q8_roundf(float v) {
    if (!(v == v)) return 0;
    if (v >= 127.0f) return 127;
    if (v <= -127.0f) return -127;
    return static_cast<int8_t>(static_cast<int>(roundf(v)));
}

}  // namespace bitgate
