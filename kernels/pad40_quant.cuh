// The device side of the quantize_pad40_t plane, shared by every kernel that writes it: one
// (token, chunk) is quantized by an aligned group of L lanes (pad40_quantize_share), 2 or 4 in the
// standalone quantizer, 8 in the fused rms_norm and SwiGLU producers. The chunk maximum and the
// ssum are exact (max and integer sum do not depend on the shuffle order), so they equal the
// model's serial loops at every L.
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

// One (token, chunk) quantized by an aligned group of L lanes (2, 4 or 8; h = lane % L), each
// holding values 32h/L .. 32(h+1)/L - 1 of the chunk as kPad40Words / L float4. The maximum meets
// by xor shuffles (exact in any order: fmaxf drops a NaN unless both are NaN, as in the model's
// serial loop), every lane then divides the same operands (same d and 1/d), and the integer sum
// meets by xor shuffles: the model's arithmetic at any L. All 32 lanes of the warp must call it
// (the shuffles use the full mask).
template <int L>
struct Pad40Share {
    uint32_t word[kPad40Words / L];  // words 8h/L .. 8(h+1)/L - 1 of the token's 32 quantized bytes
    float d;                         // the chunk's scale, the same in every lane of the group
    int ssum;                        // the chunk's integer sum, the same in every lane of the group
};

template <int L>
__device__ __forceinline__ Pad40Share<L> pad40_quantize_share(const float4 (&v)[kPad40Words / L]) {
    static_assert(L == 2 || L == 4 || L == 8, "2, 4 or 8 lanes a chunk");
    constexpr int kWords = kPad40Words / L;
    // No +0 to start from: a chunk of NaNs keeps am = NaN, as the model's does.
    float am = fmaxf(fmaxf(fabsf(v[0].x), fabsf(v[0].y)), fmaxf(fabsf(v[0].z), fabsf(v[0].w)));
#pragma unroll
    for (int k = 1; k < kWords; ++k)
        am = fmaxf(am, fmaxf(fmaxf(fabsf(v[k].x), fabsf(v[k].y)), fmaxf(fabsf(v[k].z), fabsf(v[k].w))));
#pragma unroll
    for (int off = 1; off < L; off <<= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, off));
    Pad40Share<L> out;
    out.d = am / 127.0f;
    const float di = out.d != 0.0f ? 1.0f / out.d : 0.0f;
    int ssum = 0;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        const int8_t q0 = pad40_round_sat(v[k].x * di), q1 = pad40_round_sat(v[k].y * di);
        const int8_t q2 = pad40_round_sat(v[k].z * di), q3 = pad40_round_sat(v[k].w * di);
        out.word[k] = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                      uint32_t(uint8_t(q3)) << 24;
        ssum += int(q0) + int(q1) + int(q2) + int(q3);
    }
#pragma unroll
    for (int off = 1; off < L; off <<= 1) ssum += __shfl_xor_sync(0xffffffffu, ssum, off);
    out.ssum = ssum;
    return out;
}

// The standalone quantizer's form (L = 2 or 4): part points at the lane's values (16-byte aligned,
// any memory space), r is the token's row in the tile, tile the tile's index. Lane h writes its
// words of the token's aligned 32-byte sector of qs as one store (qs 16-byte aligned), the L
// stores a full sector; lane 0 of the group writes the sda word.
template <int L>
__device__ __forceinline__ void pad40_quantize_lanes_store(const float* part, uint32_t r, uint32_t h, int64_t tile,
                                                           uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    static_assert(L == 2 || L == 4, "the standalone kernel takes 2 or 4 lanes a chunk");
    constexpr int kWords = kPad40Words / L;
    float4 v[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) v[k] = reinterpret_cast<const float4*>(part)[k];
    const Pad40Share<L> q = pad40_quantize_share<L>(v);
    uint8_t* t = qs + tile * kPad40TileBytes + pad40_qs_offset(r, kWords * h);
    if constexpr (L == 2)
        *reinterpret_cast<uint4*>(t) = make_uint4(q.word[0], q.word[1], q.word[2], q.word[3]);
    else
        *reinterpret_cast<uint2*>(t) = make_uint2(q.word[0], q.word[1]);
    if (h == 0) sda[tile * kPad40TileSda + r] = pad40_sda_word(__half_as_ushort(__float2half_rn(q.d)), q.ssum);
}

// The fused producers' form (L = 8, lane u = lane & 7 holds values 4u..4u+3, word u): token t,
// chunk c of the plane. `store` false: the lane takes part in the shuffles but writes nothing (a
// whole 8-lane group past the end of the work). A padded token (t >= n) passes v = 0: d = 0, every
// q = 0, ssum = 0, so both planes get zeros. The group's 8 words land in one aligned 32-byte
// sector of the tile, so every store is a full sector.
__device__ __forceinline__ void pad40_quantize_store(float4 v, int64_t t, int64_t c, int64_t nchunk, bool store,
                                                     uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    const uint32_t u = threadIdx.x & 7u;
    const float4 one[1] = {v};
    const Pad40Share<8> q = pad40_quantize_share<8>(one);
    if (!store) return;
    *reinterpret_cast<uint32_t*>(qs + pad40_qs_at(t, c, u, nchunk)) = q.word[0];
    if (u == 0) sda[pad40_sda_at(t, c, nchunk)] = pad40_sda_word(__half_as_ushort(__float2half_rn(q.d)), q.ssum);
}

}  // namespace bitgate::cuda
