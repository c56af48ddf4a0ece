// The defective quantize_q8_0 launchers behind mutants/quantize_q8_0.cpp.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class Q8Defect {
    skip_last,     // never writes the last block
    past_end,      // writes one block past the end of y
    rintf,         // rounds with rintf
    writes_input,  // scribbles on x
    cached,        // caches its result keyed on the input pointer
};

// As cuda::quantize_q8_0 with the defect; returns the launches it made (cached: 0 on a hit).
int quantize_q8_0_defective(Q8Defect defect, const float* x, BlockQ8_0* y, int64_t k, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
