// The defective kernel behind kernels/mutants/kv_store_mutants.cpp.
#include <cuda_fp16.h>

#include "bitgate/spec.hpp"

namespace bitgate::cuda {

namespace {

__device__ uint32_t pack2(float lo, float hi) {
    return uint32_t(__half_as_ushort(__float2half_rn(lo))) | (uint32_t(__half_as_ushort(__float2half_rn(hi))) << 16);
}

// The real kernel's mapping over n + 1 tokens: token n (the defect) repeats token n - 1's first
// word at position pos0 + n.
__global__ void one_past_kernel(const float4* kv, int64_t n, int64_t heads, int64_t wpr, uint2* cache, int64_t ctx,
                                int64_t pos0) {
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i >= (n + 1) * heads * wpr) return;
    const int64_t row = i / wpr, j = i % wpr, t = row / heads, h = row % heads;
    if (t == n && j != 0) return;
    const float4 v = kv[((t < n ? t : n - 1) * heads + h) * wpr + j];
    cache[(h * ctx + pos0 + t) * wpr + j] = make_uint2(pack2(v.x, v.y), pack2(v.z, v.w));
}

int launch(const Shape& s, const DeviceIo& io) {
    const int64_t wpr = s["head_dim"] / 4, threads = (s["n"] + 1) * s["heads"] * wpr;
    one_past_kernel<<<unsigned((threads + 255) / 256), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        static_cast<const float4*>(io.in[0]), s["n"], s["heads"], wpr, static_cast<uint2*>(io.out[0]), s["ctx"],
        s["pos0"]);
    return 1;
}

BITGATE_DEVICE_PREPARE("kv_store", "m_one_past", [](const Shape& s, const DeviceIo& io) {
    cudaMemcpyAsync(io.out[0], io.in[1], size_t(s["heads"] * s["ctx"] * s["head_dim"]) * 2, cudaMemcpyDeviceToDevice,
                    static_cast<cudaStream_t>(io.stream));
    return 0;
});
BITGATE_DEVICE("kv_store", "m_one_past", launch);

}  // namespace

}  // namespace bitgate::cuda
