// The defective kernel behind mutants/rope.cpp.
#include "rope.cuh"

#include "bitgate/rope_table.hpp"

namespace bitgate::cuda {

namespace {

__global__ void swapped_kernel(const float* in, float* out, int64_t n, int64_t heads, int64_t hd, const int32_t* pos,
                               float base) {
    const int64_t half = hd / 2, g = int64_t(blockIdx.x) * 128 + threadIdx.x;
    if (g >= n * half) return;
    const int64_t t = g / half, i = g % half;
    float c, s;
    rope_cos_sin(pos[t], i, hd, base, &s, &c);  // the defect: sin and cos swapped
    for (int64_t h = 0; h < heads; ++h) {
        const int64_t at = (t * heads + h) * hd + i;
        const float x0 = in[at], x1 = in[at + half];
        out[at] = x0 * c - x1 * s;
        out[at + half] = x0 * s + x1 * c;
    }
}

}  // namespace

void mutants::rope_neox_to_swapped(const float* in, float* out, int64_t n, int64_t n_head, int64_t head_dim,
                                   const int32_t* pos, float base, cudaStream_t stream) {
    const int64_t threads = n * (head_dim / 2);
    swapped_kernel<<<unsigned((threads + 127) / 128), 128, 0, stream>>>(in, out, n, n_head, head_dim, pos, base);
}

}  // namespace bitgate::cuda
