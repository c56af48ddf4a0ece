// The defective mmq_q8_0 launchers behind mutants/mmq_q8_0.cpp: the real kernel templates with one
// defect switched on.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class MmqDefect { padded_token, past_n, chunk_order, no_wait };

// One launch, as cuda::mmq_q8_0 with the tiling each defect is shown on.
void mmq_q8_0_defective(MmqDefect defect, const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C,
                        int64_t n, int64_t N, int64_t K, cudaStream_t stream);

// The Hopper variant `wgmma` with one defect, overlapped pipeline as the variant runs it. Defined
// in kernels/sm90a/mutants/ (compiled for sm_90a) only where BITGATE_HAVE_SM90A is defined.
// add_first (held to mmq_q8_0_add's `wgmma_*` variants): bias and res seed the accumulators.
enum class WgmmaDefect { chunk_order, ready_early, add_first };
void mmq_q8_0_wgmma_defective(WgmmaDefect defect, const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w,
                              float* C, int64_t n, int64_t N, int64_t K, cudaStream_t stream,
                              const float* bias = nullptr, const float* res = nullptr);

}  // namespace bitgate::cuda::mutants
