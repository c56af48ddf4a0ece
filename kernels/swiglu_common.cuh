// SwiGLU's value, shared by the swiglu kernels and the fused swiglu_q8_0 (refimpl/swiglu.cpp's
// swiglu_value): exp_det (no libm, no MUFU) and IEEE division (-prec-div=true).
#pragma once
#include "bitgate/exp.hpp"

namespace bitgate::cuda {

__device__ __forceinline__ float silu_mul(float g, float u) { return (g / (1.0f + exp_det(-g))) * u; }

}  // namespace bitgate::cuda
