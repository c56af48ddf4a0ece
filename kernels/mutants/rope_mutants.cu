// The defective kernel behind kernels/mutants/rope_mutants.cpp.
#include "bitgate/rope_table.hpp"
#include "bitgate/spec.hpp"

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

int launch(const Shape& s, const DeviceIo& io) {
    const int64_t threads = s["n"] * (s["head_dim"] / 2);
    swapped_kernel<<<unsigned((threads + 127) / 128), 128, 0, static_cast<cudaStream_t>(io.stream)>>>(
        io.input<float>(0), io.output<float>(0), s["n"], s["heads"], s["head_dim"], io.input<int32_t>(1),
        float(s["base"]));
    return 1;
}

BITGATE_DEVICE("rope", "m_sin_cos_swapped", launch);

}  // namespace

}  // namespace bitgate::cuda
