// Block formats, byte-compatible with GGUF/ggml.
#pragma once
#include <cstddef>
#include <cstdint>

namespace bitgate {

constexpr int QK8_0 = 32;

// f16 scale `d` (raw bits, so host code needs no half type) then 32 signed bytes. 34 bytes with
// alignment 2: a 32-bit word of qs is only 2-byte aligned, which is why kernels rebuild words
// from 16-bit loads.
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[QK8_0];
};
static_assert(sizeof(BlockQ8_0) == 34, "BlockQ8_0 must be 34 bytes, as in GGUF");
static_assert(alignof(BlockQ8_0) == 2, "BlockQ8_0 must have alignment 2, as in GGUF");
static_assert(offsetof(BlockQ8_0, qs) == 2, "BlockQ8_0: qs follows the f16 scale");

}  // namespace bitgate
