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

// One thread quantizes one (token, chunk) whole: row points at the chunk's 32 floats (16-byte
// aligned, any memory space), r is the token's row in the tile, tile the tile's index. The
// maximum is exact in any order and the sum is an exact integer sum, so this is
// pad40_quantize_store's arithmetic, and the model's. Writes the token's aligned 32-byte sector
// of qs as two 16-byte stores (qs 16-byte aligned) and its sda word.
__device__ __forceinline__ void pad40_quantize_chunk_store(const float* row, uint32_t r, int64_t tile,
                                                           uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    float4 v[kPad40Words];
#pragma unroll
    for (int k = 0; k < kPad40Words; ++k) v[k] = reinterpret_cast<const float4*>(row)[k];
    // fmaxf drops a NaN unless both are NaN: a chunk of NaNs keeps am = NaN, as the model's does
    // (so no +0 to start from).
    float am = fmaxf(fmaxf(fabsf(v[0].x), fabsf(v[0].y)), fmaxf(fabsf(v[0].z), fabsf(v[0].w)));
#pragma unroll
    for (int k = 1; k < kPad40Words; ++k)
        am = fmaxf(am, fmaxf(fmaxf(fabsf(v[k].x), fabsf(v[k].y)), fmaxf(fabsf(v[k].z), fabsf(v[k].w))));
    const float d = am / 127.0f;
    const float di = d != 0.0f ? 1.0f / d : 0.0f;
    uint32_t word[kPad40Words];
    int ssum = 0;
#pragma unroll
    for (int k = 0; k < kPad40Words; ++k) {
        const int8_t q0 = pad40_round_sat(v[k].x * di), q1 = pad40_round_sat(v[k].y * di);
        const int8_t q2 = pad40_round_sat(v[k].z * di), q3 = pad40_round_sat(v[k].w * di);
        word[k] = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                  uint32_t(uint8_t(q3)) << 24;
        ssum += int(q0) + int(q1) + int(q2) + int(q3);
    }
    uint8_t* t = qs + tile * kPad40TileBytes;
    *reinterpret_cast<uint4*>(t + pad40_qs_offset(r, 0)) = make_uint4(word[0], word[1], word[2], word[3]);
    *reinterpret_cast<uint4*>(t + pad40_qs_offset(r, 4)) = make_uint4(word[4], word[5], word[6], word[7]);
    sda[tile * kPad40TileSda + r] = pad40_sda_word(__half_as_ushort(__float2half_rn(d)), ssum);
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
