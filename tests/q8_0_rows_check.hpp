// A check the fused Q8_0 producers' tests share (rms_norm_q8_0, swiglu_q8_0): every value of
// [n][cols] rows decodes from its Q8_0 block to within half a step of the f32 value it encodes,
// plus up to 127 times the f16 rounding of the step (relative 2^-11): the values were divided by
// the f32 scale, and the block stores it as f16.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "bitgate/f16.hpp"
#include "bitgate/formats.hpp"

namespace bitgate::test {

inline void expect_q8_0_within_half_a_step(const float* values, const BlockQ8_0* xq, int64_t n, int64_t cols) {
    const int64_t per = cols / QK8_0;
    for (int64_t r = 0; r < n; ++r)
        for (int64_t b = 0; b < per; ++b) {
            const BlockQ8_0& blk = xq[r * per + b];
            const float step = f16_to_f32(blk.d);
            for (int j = 0; j < QK8_0; ++j) {
                const float v = values[r * cols + b * QK8_0 + j];
                EXPECT_LE(std::fabs(step * float(blk.qs[j]) - v), (0.5f + 127.0f / 2048.0f) * step * 1.001f)
                    << "row " << r << " block " << b << " value " << j;
            }
        }
}

}  // namespace bitgate::test
