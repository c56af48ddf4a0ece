// Host models of prefill_chain: the prefill path's norm-then-projection, rms_norm of x [n][K]
// into the quantize_pad40_t plane, then mmq_q8_0 against Q8_0 weights [N][K] -> C f32 [n][N].
// Both chains only compose the existing models, in the order their launchers run.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::ref {

// Caller-owned intermediates: y [n][K] f32 and the plane (pad40_qs_bytes / pad40_sda_bytes of
// (n, K)); both chains write every byte of them.
struct ChainWork {
    float* y;
    uint8_t* qs;
    uint32_t* sda;
};

// rms_norm_quant_f32_t (y and the plane in one pass), then mmq_q8_0.
void prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                         int64_t n, int64_t K, int64_t N);

// rms_norm_f32, then quantize_pad40_t of y, then mmq_q8_0.
void prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                           int64_t n, int64_t K, int64_t N);

}  // namespace bitgate::ref
