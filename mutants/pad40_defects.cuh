// A deliberately defective copy of kernels/pad40_quant.cuh for the mutants: each Defect breaks
// one property of the plane the engine must notice.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "bitgate/pad40.hpp"

namespace bitgate::cuda::mutant {

enum class Defect {
    none,
    tail_unwritten,  // padded tokens t >= n are skipped instead of zero-filled
    no_xor,          // the swizzle's xor dropped: a bijection still, but the wrong one
    roundf,          // ties away from zero instead of rintf's ties to even
};

template <Defect D>
__device__ __forceinline__ void quantize_store(float4 v, int64_t t, int64_t n, int64_t c, int64_t nchunk, bool store,
                                               uint8_t* qs, uint32_t* sda) {
    const uint32_t u = threadIdx.x & 7u;
    float am = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
    for (int off = 4; off > 0; off >>= 1) am = fmaxf(am, __shfl_xor_sync(0xffffffffu, am, off));
    const float d = am / 127.0f;
    const float di = d != 0.0f ? 1.0f / d : 0.0f;
    auto round = [](float x) -> int8_t {
        if (D != Defect::roundf) return pad40_round(x);
        if (!(x == x)) return 0;
        const float q = roundf(x);
        return q >= 127.0f ? 127 : q <= -128.0f ? -128 : int8_t(int(q));
    };
    const int8_t q0 = round(v.x * di), q1 = round(v.y * di), q2 = round(v.z * di), q3 = round(v.w * di);
    int ssum = int(q0) + int(q1) + int(q2) + int(q3);
    for (int off = 4; off > 0; off >>= 1) ssum += __shfl_xor_sync(0xffffffffu, ssum, off);
    if (!store || (D == Defect::tail_unwritten && t >= n)) return;
    const uint32_t word = uint32_t(uint8_t(q0)) | uint32_t(uint8_t(q1)) << 8 | uint32_t(uint8_t(q2)) << 16 |
                          uint32_t(uint8_t(q3)) << 24;
    const uint32_t r = uint32_t(t % kPad40Tokens);
    const uint32_t in_tile = D == Defect::no_xor ? (r >> 2) * 128u + (((r & 3u) * 2u + (u >> 2)) << 4) + (u & 3u) * 4u
                                                 : pad40_qs_offset(r, u);
    *reinterpret_cast<uint32_t*>(qs + pad40_tile(t / kPad40Tokens, c, nchunk) * kPad40TileBytes + in_tile) = word;
    if (u == 0) sda[pad40_sda_at(t, c, nchunk)] = pad40_sda_word(__half_as_ushort(__float2half_rn(d)), ssum);
}

}  // namespace bitgate::cuda::mutant
