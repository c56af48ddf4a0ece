// mmq_q8_0: Q8_0 weights [N][K] times the quantize_pad40_t plane of n tokens -> f32 C [n][N],
// on the int8 tensor cores. Float epilogue and order: docs/mmq_q8_0.md.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

enum class MmqTiling {
    automatic,  // by shape and device: `wgmma` on sm_90a where the shape fills the card, else `mma`
    mma,        // mma.sync, by shape: the largest tile that still gives the card a full wave
    t128x128,   // mma.sync, tokens x rows per CTA
    t64x128,
    t64x64,
    wgmma,      // sm_90a warpgroup MMA (kernels/sm90a/); throws where it is not built or cannot run
};

// Enqueues one launch on `stream`. qs and sda must be 16-byte aligned (cudaMalloc gives 256);
// w needs only its natural 2-byte alignment; K a multiple of 32; n, N >= 1. Writes C[t][r] for
// t < n, r < N and nothing else. Every tiling gives the same bytes.
void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N, int64_t K,
              MmqTiling tiling, cudaStream_t stream);

// mmq_q8_0 with the add epilogue (family mmq_q8_0_add): C[t][r] = sum + bias[r] (the q/k/v bias,
// broadcast over tokens), then + res[t][r] (the residual stream), each one __fadd_rn after the
// row's whole sum, so the bytes of mmq_q8_0 followed by bias_f32 and add_f32. Either addend may
// be null; res may equal C (in place).
void mmq_q8_0_add(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, const float* bias, const float* res,
                  float* C, int64_t n, int64_t N, int64_t K, MmqTiling tiling, cudaStream_t stream);

}  // namespace bitgate::cuda
