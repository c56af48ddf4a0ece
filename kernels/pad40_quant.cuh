// The device side of the quantize_pad40_t plane, shared by every kernel that writes it.
//
// An aligned group of 8 lanes holds one (token, chunk): lane u = lane & 7 holds values 4u..4u+3,
// which become 32-bit word u of the token's 32 quantized bytes. The chunk maximum and the ssum
// are exact (max and integer sum do not depend on the shuffle order), so they equal the model's
// serial loops. The group's 8 words land in one aligned 32-byte sector of the tile
// (bitgate/pad40.hpp), so every store is a full sector.
#pragma once
#if !defined(BITGATE_CUDA_SIM)
#include <cuda_fp16.h>
#endif

#include <cstdint>

#include "bitgate/pad40.hpp"

namespace bitgate::cuda {

// pad40_round(v) in one instruction: cvt.rni.sat.s8.f32 rounds to nearest even, saturates to
// [-128, 127] and turns NaN into 0, which is pad40_round's definition; tests/pad40_round_device.cu
// compares the two on all 2^32 inputs (QuantizePad40Device.SaturatingConversionIsTheModelsRound).
// The compiler's code for pad40_round itself (round, two compares, convert) cost the
// one-thread-a-chunk quantizer 7% of its time.
#if !defined(BITGATE_CUDA_SIM)
__device__ __forceinline__ int8_t pad40_round_sat(float v) {
    int r;
    asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(r) : "f"(v));
    return int8_t(r);
}
#else
inline int8_t pad40_round_sat(float v) { return pad40_round(v); }
#endif

// L lanes (2 or 4, aligned: h = lane % L) quantize one (token, chunk): part points at the chunk's
// values 32h/L .. 32(h+1)/L - 1 (16-byte aligned, any memory space), r is the token's row in the
// tile, tile the tile's index. The maximum meets by xor shuffles (exact in any order: fmaxf drops
// a NaN unless both are NaN, as in the model's serial loop), every lane then divides the same
// operands (same d and 1/d), and the integer sum meets by xor shuffles: this is
// pad40_quantize_store's arithmetic, and the model's. Lane h writes words 8h/L .. 8(h+1)/L - 1 of
// the token's aligned 32-byte sector of qs as one store (qs 16-byte aligned), the L stores a full
// sector; lane 0 of the group writes the sda word. All 32 lanes of the warp must call it (the
// shuffles use the full mask).
template <int L>
__device__ __forceinline__ void pad40_quantize_lanes_store(const float* part, uint32_t r, uint32_t h, int64_t tile,
                                                           uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    static_assert(L == 2 || L == 4, "2 or 4 lanes a chunk");
    constexpr int kWords = kPad40Words / L;
    float4 v[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) v[k] = reinterpret_cast<const float4*>(part)[k];
    // No +0 to start from: a chunk of NaNs keeps am = NaN, as the model's does.
    float am = fmaxf(fmaxf(fabsf(v[0].x), fabsf(v[0].y)), fmaxf(fabsf(v[0].z), fabsf(v[0].w)));
#pragma unroll
    for (int k = 1; k < kWords; ++k)
        am = fmaxf(am, fmaxf(fmaxf(fabsf(v[k].x), fabsf(v[k].y)), fmaxf(fabsf(v[k].z), fabsf(v[k].w))));
#pragma unroll
    for (int off = 1; off < L; off <<= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, off));
    const float d = am / 127.0f;
    const float di = d != 0.0f ? 1.0f / d : 0.0f;
    uint32_t word[kWords];
    int ssum = 0;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        const int8_t q0 = pad40_round_sat(v[k].x * di), q1 = pad40_round_sat(v[k].y * di);
        const int8_t q2 = pad40_round_sat(v[k].z * di), q3 = pad40_round_sat(v[k].w * di);
        word[k] = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                  uint32_t(uint8_t(q3)) << 24;
        ssum += int(q0) + int(q1) + int(q2) + int(q3);
    }
#pragma unroll
    for (int off = 1; off < L; off <<= 1) ssum += __shfl_xor_sync(0xffffffffu, ssum, off);
    uint8_t* t = qs + tile * kPad40TileBytes + pad40_qs_offset(r, kWords * h);
    if constexpr (L == 2)
        *reinterpret_cast<uint4*>(t) = make_uint4(word[0], word[1], word[2], word[3]);
    else
        *reinterpret_cast<uint2*>(t) = make_uint2(word[0], word[1]);
    if (h == 0) sda[tile * kPad40TileSda + r] = pad40_sda_word(__half_as_ushort(__float2half_rn(d)), ssum);
}

// All 32 lanes of the warp must call it (the shuffles use the full mask). `store` false: the lane
// takes part in the shuffles but writes nothing (a whole 8-lane group past the end of the work).
// A padded token (t >= n) passes v = 0: d = 0, every q = 0, ssum = 0, so both planes get zeros.
__device__ __forceinline__ void pad40_quantize_store(float4 v, int64_t t, int64_t c, int64_t nchunk, bool store,
                                                     uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    const uint32_t u = threadIdx.x & 7u;
    float am = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    for (int off = 4; off > 0; off >>= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, off));
    const float d = am / 127.0f;
    const float di = d != 0.0f ? 1.0f / d : 0.0f;
    const int8_t q0 = pad40_round_sat(v.x * di), q1 = pad40_round_sat(v.y * di);
    const int8_t q2 = pad40_round_sat(v.z * di), q3 = pad40_round_sat(v.w * di);
    int ssum = int(q0) + int(q1) + int(q2) + int(q3);
    for (int off = 4; off > 0; off >>= 1) ssum += __shfl_xor_sync(0xffffffffu, ssum, off);
    if (!store) return;
    const uint32_t word = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                          uint32_t(uint8_t(q3)) << 24;
    *reinterpret_cast<uint32_t*>(qs + pad40_qs_at(t, c, u, nchunk)) = word;
    if (u == 0) sda[pad40_sda_at(t, c, nchunk)] = pad40_sda_word(__half_as_ushort(__float2half_rn(d)), ssum);
}

}  // namespace bitgate::cuda
