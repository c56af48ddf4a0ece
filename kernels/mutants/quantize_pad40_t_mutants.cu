// The defective kernels behind kernels/mutants/quantize_pad40_t_mutants.cpp.
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
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
int launch(const Shape& s, const DeviceIo& io) {
    const int64_t words = pad40_tokens(s["n"]) * (s["d"] / 4);
    quantize_kernel<D><<<unsigned(words / 256), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        static_cast<const float4*>(io.in[0]), s["n"], s["d"] / 4, io.output<uint8_t>(0), io.output<uint32_t>(1));
    return 1;
}

BITGATE_DEVICE("quantize_pad40_t", "m_tail_unwritten", launch<Defect::tail_unwritten>);
BITGATE_DEVICE("quantize_pad40_t", "m_no_xor", launch<Defect::no_xor>);
BITGATE_DEVICE("quantize_pad40_t", "m_roundf", launch<Defect::roundf>);

}  // namespace

}  // namespace bitgate::cuda
