#include "quantize_pad40_t.cuh"

#include "bitgate/pad40.hpp"
#include "pad40_quant.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

// One thread per 4-value word of the 64-padded activation, token-major: a warp reads 512
// contiguous bytes of one token and writes four full 32-byte sectors, one per chunk.
// d/4 is a multiple of 8, so the 8 lanes of an aligned group share one (token, chunk).
__global__ void quantize_pad40_t_kernel(const float4* __restrict__ x, int64_t n, int64_t words_per_row,
                                        uint8_t* __restrict__ qs, uint32_t* __restrict__ sda) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;  // the grid is exact: no bound check
    const int64_t t = i / words_per_row, w = i % words_per_row;
    const float4 v = t < n ? x[t * words_per_row + w] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    pad40_quantize_store(v, t, w / kPad40Words, words_per_row / kPad40Words, true, qs, sda);
}

}  // namespace

void quantize_pad40_t(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    const int64_t words = pad40_tokens(n) * (d / 4);  // a multiple of 64 * 8: whole blocks
    quantize_pad40_t_kernel<<<unsigned(words / kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), n, d / 4, qs, sda);
}

}  // namespace bitgate::cuda
