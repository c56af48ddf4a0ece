// The byte differ: counts what differs and decodes the first differences to named coordinates,
// with hex and, for f32, the ulp distance.
#pragma once
#include <cstdint>
#include <span>

#include "bitgate/spec.hpp"
#include "verdict.hpp"

namespace bitgate {

// Difference with bytes == 0 when equal.
Difference diff_bytes(const TensorSpec& t, const Shape& s, std::span<const uint8_t> expected,
                      std::span<const uint8_t> actual, Verdict verdict, size_t show = 6);

// Distance in units in the last place between two f32 bit patterns (+0 and -0 are 0 apart).
uint64_t ulp_distance(uint32_t a, uint32_t b);

}  // namespace bitgate
