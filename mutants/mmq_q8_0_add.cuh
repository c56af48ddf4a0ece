// The defective mmq_q8_0_add launcher behind mutants/mmq_q8_0_add.cpp.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

// The fused GEMM whose addend (bias[col] and/or res[t][col]) seeds the accumulator before the
// chunks instead of following the whole sum: every element written, rounded at other places (1 launch).
int mmq_q8_0_add_first(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, const float* bias, const float* res,
                       float* C, int64_t n, int64_t N, int64_t K, cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
