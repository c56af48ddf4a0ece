// The defective kernels behind mutants/quantize_pad40_t.cpp.
#include "quantize_pad40_t.cuh"

#include "bitgate/pad40.hpp"
#include "pad40_defects.cuh"

namespace bitgate::cuda {

namespace {

using mutant::Defect;

template <Defect D>
__global__ void quantize_kernel(const float4* x, int64_t n, int64_t words_per_row, uint8_t* qs, uint32_t* sda) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    const int64_t t = i / words_per_row, w = i % words_per_row;
    const float4 v = t < n ? x[t * words_per_row + w] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    mutant::quantize_store<D>(v, t, n, w / kPad40Words, words_per_row / kPad40Words, true, qs, sda);
}

template <Defect D>
void launch(const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    const int64_t words = pad40_tokens(n) * (d / 4);
    quantize_kernel<D><<<unsigned(words / 256), 256, 0, stream>>>(reinterpret_cast<const float4*>(x), n, d / 4, qs, sda);
}

}  // namespace

namespace mutants {

void quantize_pad40_t_defective(Pad40Defect defect, const float* x, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda,
                                cudaStream_t stream) {
    switch (defect) {
        case Pad40Defect::tail_unwritten: launch<Defect::tail_unwritten>(x, n, d, qs, sda, stream); break;
        case Pad40Defect::no_xor: launch<Defect::no_xor>(x, n, d, qs, sda, stream); break;
        case Pad40Defect::roundf: launch<Defect::roundf>(x, n, d, qs, sda, stream); break;
    }
}

}  // namespace mutants

}  // namespace bitgate::cuda
