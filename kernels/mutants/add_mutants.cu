// The defective kernel behind kernels/mutants/add_mutants.cpp.
#include "bitgate/spec.hpp"

namespace bitgate::cuda {

namespace {

__global__ void no_tail_kernel(const float4* a, const float4* b, float4* y, int64_t words) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i >= words) return;  // the defect: nothing for the n % 4 values after the last word
    const float4 x = a[i], z = b[i];
    y[i] = make_float4(x.x + z.x, x.y + z.y, x.z + z.z, x.w + z.w);
}

int launch(const Shape& s, const DeviceIo& io) {
    const int64_t words = s["n"] * s["d"] / 4;
    if (words == 0) return 0;
    no_tail_kernel<<<unsigned((words + 255) / 256), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        static_cast<const float4*>(io.in[0]), static_cast<const float4*>(io.in[1]), static_cast<float4*>(io.out[0]),
        words);
    return 1;
}

BITGATE_DEVICE("add", "m_skip_tail", launch);

}  // namespace

}  // namespace bitgate::cuda
