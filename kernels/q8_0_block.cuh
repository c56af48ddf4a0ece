// One Q8_0 block quantized by one warp, a lane per value: ggml's bytes (refimpl/quantize_q8_0.cpp).
// Shared by quantize_q8_0 and the fused rms_norm_q8_0, so that both write the same bytes by
// construction; their claims check it on the device as well.
#pragma once
#include <cuda_fp16.h>

#include "bitgate/formats.hpp"
#include "bitgate/q8_round.hpp"

namespace bitgate::cuda {

// v: this lane's value (lane j holds value j of the block). The maximum of finite values is
// order-independent and exact, so the shuffle tree needs no fixed shape; the division and
// reciprocal are IEEE (-prec-div=true).
__device__ __forceinline__ void quantize_q8_0_block_warp(float v, BlockQ8_0* __restrict__ out, int lane) {
    // ggml's sequential amax = MAX(amax, fabsf(v)), MAX(a, b) = a > b ? a : b, keeps only what
    // follows the block's last NaN (the NaN itself when it is the last value): lanes up to the
    // last NaN drop out of the maximum, and a NaN in lane 31 is the result. Without a NaN this is
    // the plain maximum.
    const unsigned nans = __ballot_sync(0xffffffffu, v != v);
    const int last_nan = nans ? 31 - __clz(nans) : -1;
    float amax = lane <= last_nan ? 0.0f : fabsf(v);
    for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    if (last_nan == 31) amax = __shfl_sync(0xffffffffu, fabsf(v), 31);

    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    out->qs[lane] = q8_roundf(v * id);
    if (lane == 0) out->d = __half_as_ushort(__float2half_rn(d));
}

}  // namespace bitgate::cuda
