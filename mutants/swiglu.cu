// The defective kernels behind mutants/swiglu.cpp.
#include "swiglu.cuh"

#include "bitgate/exp.hpp"
#include "bitgate/pad40.hpp"
#include "pad40_defects.cuh"

namespace bitgate::cuda {

namespace {

enum class Bug { tail_unwritten, no_xor, expf };

template <Bug B>
__device__ __forceinline__ float silu_mul(float g, float u) {
    const float e = B == Bug::expf ? __expf(-g) : exp_det(-g);
    return (g / (1.0f + e)) * u;
}

template <Bug B>
__global__ void fused_kernel(const float4* g, const float4* u, float4* out, int64_t n, int64_t words_per_row,
                             uint8_t* qs, uint32_t* sda) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    const int64_t t = i / words_per_row, w = i % words_per_row;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (t < n) {
        const float4 a = g[i], b = u[i];
        v = make_float4(silu_mul<B>(a.x, b.x), silu_mul<B>(a.y, b.y), silu_mul<B>(a.z, b.z), silu_mul<B>(a.w, b.w));
        out[i] = v;
    }
    constexpr mutant::Defect D = B == Bug::tail_unwritten ? mutant::Defect::tail_unwritten
                                 : B == Bug::no_xor       ? mutant::Defect::no_xor
                                                          : mutant::Defect::none;
    mutant::quantize_store<D>(v, t, n, w / kPad40Words, words_per_row / kPad40Words, true, qs, sda);
}

template <Bug B>
void launch(const float* g, const float* u, float* out, int64_t n, int64_t f, uint8_t* qs, uint32_t* sda,
            cudaStream_t stream) {
    const int64_t words = pad40_tokens(n) * (f / 4);
    fused_kernel<B><<<unsigned(words / 256), 256, 0, stream>>>(reinterpret_cast<const float4*>(g),
                                                                reinterpret_cast<const float4*>(u),
                                                                reinterpret_cast<float4*>(out), n, f / 4, qs, sda);
}

}  // namespace

void mutants::swiglu_quant_f32_t_defective(SwigluDefect defect, const float* g, const float* u, float* out, int64_t n,
                                           int64_t f, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    switch (defect) {
        case SwigluDefect::tail_unwritten: launch<Bug::tail_unwritten>(g, u, out, n, f, qs, sda, stream); break;
        case SwigluDefect::no_xor: launch<Bug::no_xor>(g, u, out, n, f, qs, sda, stream); break;
        case SwigluDefect::expf: launch<Bug::expf>(g, u, out, n, f, qs, sda, stream); break;
    }
}

}  // namespace bitgate::cuda
