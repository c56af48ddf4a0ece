// The m_rintf mutants' rounding, host and device: q8_roundf's clamping (defined bytes for every
// input, bitgate/q8_round.hpp) with rint's ties to even in place of roundf's ties away, so that
// the mutants differ from the real rounding on exact ties only, never through an undefined cast.
#pragma once
#include <cmath>
#include <cstdint>

#include "bitgate/hd.hpp"

namespace bitgate::mutants {

BITGATE_HD int8_t q8_rintf(float v) {
    if (!(v == v)) return 0;
    if (v >= 127.0f) return 127;
    if (v <= -127.0f) return -127;
    return static_cast<int8_t>(static_cast<int>(rintf(v)));
}

}  // namespace bitgate::mutants
