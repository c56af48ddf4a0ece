// Inputs of the rms_norm tests (tests/rms_norm_test.cpp, tests/rms_norm_sim_test.cpp): rows from
// the family's generator and a norm weight with a few distinct values.
#pragma once
#include <cstdint>
#include <vector>

#include "bitgate/inputs.hpp"

namespace bitgate::test {

inline std::vector<float> rms_gen(size_t count, uint64_t row, const char* profile, const char* tensor) {
    std::vector<float> v(count);
    inputs::fill_f32({reinterpret_cast<uint8_t*>(v.data()), v.size() * 4},
                     GenRequest{.seed = 5, .profile = profile, .tensor = tensor}, row);
    return v;
}

inline std::vector<float> rms_weights(int64_t d) {
    std::vector<float> w(static_cast<size_t>(d));
    for (int64_t i = 0; i < d; ++i) w[size_t(i)] = 0.75f + float(i % 7) * 0.125f;
    return w;
}

}  // namespace bitgate::test
