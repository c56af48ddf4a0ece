// mmq_q8_0 on sm_90a's warpgroup MMA: the Hopper variant `wgmma`, same bytes as every other
// mmq_q8_0 tiling (docs/mmq_q8_0.md). Defined only where cmake/sm90a.cmake builds it, which then
// defines BITGATE_HAVE_SM90A for the specs, the mutants and the tests. Plain C++, so that
// specs/mmq_q8_0.cpp can include it.
#pragma once
#include <cstdint>

#include "bitgate/stream.hpp"

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

// Enqueues one launch on `stream`: 128 tokens x 128 weight rows per CTA. qs and sda 16-byte
// aligned, w 2-byte aligned, K a multiple of 32, n, N >= 1. Writes C[t][r] for t < n, r < N
// only. Throws std::runtime_error on a device other than compute capability 9.0. `overlap`: two
// accumulator sets, chunk c + 1's wgmma during chunk c's epilogue (the same bytes either way).
// bias, res: the add epilogue of mmq_q8_0_add (kernels/mmq_q8_0.cuh), either may be null.
void mmq_q8_0_wgmma(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
                    int64_t K, bool overlap, cudaStream_t stream, const float* bias = nullptr,
                    const float* res = nullptr);

// Whether the current device runs it (compute capability 9.0; cached per device).
bool mmq_q8_0_wgmma_runs_here();

}  // namespace bitgate::cuda
