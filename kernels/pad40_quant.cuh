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
    const int8_t q0 = pad40_round(v.x * di), q1 = pad40_round(v.y * di);
    const int8_t q2 = pad40_round(v.z * di), q3 = pad40_round(v.w * di);
    int ssum = int(q0) + int(q1) + int(q2) + int(q3);
    for (int off = 4; off > 0; off >>= 1) ssum += __shfl_xor_sync(0xffffffffu, ssum, off);
    if (!store) return;
    const uint32_t word = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                          uint32_t(uint8_t(q3)) << 24;
    *reinterpret_cast<uint32_t*>(qs + pad40_qs_at(t, c, u, nchunk)) = word;
    if (u == 0) sda[pad40_sda_at(t, c, nchunk)] = pad40_sda_word(__half_as_ushort(__float2half_rn(d)), ssum);
}

}  // namespace bitgate::cuda
