// prefill_chain: rms_norm into the quantize_pad40_t plane, then mmq_q8_0. No kernels of its own:
// each chain enqueues the existing launchers in order, so it is exactly the code a prefill runs.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

// Caller-owned intermediates: y [n][K] f32 and the plane (pad40_qs_bytes / pad40_sda_bytes of
// (n, K)), 16-byte aligned; every byte is written.
struct ChainWork {
    float* y;
    uint8_t* qs;
    uint32_t* sda;
};

// rms_norm_quant_f32_t then mmq_q8_0 (automatic tiling): 2 launches. Returns the launch count.
int prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                        int64_t n, int64_t K, int64_t N, cudaStream_t stream);

// rms_norm_f32, quantize_pad40_t, then mmq_q8_0 (automatic tiling): 3 launches.
int prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                          int64_t n, int64_t K, int64_t N, cudaStream_t stream);

}  // namespace bitgate::cuda
