// The defective kernels behind kernels/mutants/swiglu_mutants.cpp.
#include "bitgate/exp.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
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
int launch(const Shape& s, const DeviceIo& io) {
    const int64_t words = pad40_tokens(s["n"]) * (s["f"] / 4);
    fused_kernel<B><<<unsigned(words / 256), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        static_cast<const float4*>(io.in[0]), static_cast<const float4*>(io.in[1]), static_cast<float4*>(io.out[0]),
        s["n"], s["f"] / 4, io.output<uint8_t>(1), io.output<uint32_t>(2));
    return 1;
}

BITGATE_DEVICE("swiglu", "m_tail_unwritten", launch<Bug::tail_unwritten>);
BITGATE_DEVICE("swiglu", "m_no_xor", launch<Bug::no_xor>);
BITGATE_DEVICE("swiglu", "m_expf", launch<Bug::expf>);

}  // namespace

}  // namespace bitgate::cuda
