// The defective kernel behind mutants/embed.cpp.
#include "embed.cuh"

#include <cuda_fp16.h>

namespace bitgate::cuda {

namespace {

__global__ void wrong_row_kernel(const BlockQ8_0* table, const int32_t* ids, int64_t vocab, int64_t d, int64_t words,
                                 float4* out) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i >= words) return;
    const int64_t t = i / (d / 4), w = i % (d / 4);
    const int64_t row = (int64_t(ids[t]) + 1) % vocab;  // the defect: the next row
    const BlockQ8_0* b = table + row * (d / QK8_0) + w / 8;
    const float scale = __half2float(__ushort_as_half(b->d));
    const int j = int(w % 8) * 4;
    out[i] = make_float4(float(b->qs[j]) * scale, float(b->qs[j + 1]) * scale, float(b->qs[j + 2]) * scale,
                         float(b->qs[j + 3]) * scale);
}

}  // namespace

void mutants::embed_q8_0_wrong_row(const BlockQ8_0* table, int64_t vocab, int64_t d, const int32_t* ids, int64_t n,
                                   float* out, cudaStream_t stream) {
    const int64_t words = n * (d / 4);
    wrong_row_kernel<<<unsigned((words + 255) / 256), 256, 0, stream>>>(table, ids, vocab, d, words,
                                                                        reinterpret_cast<float4*>(out));
}

}  // namespace bitgate::cuda
