// The defective kernel behind mutants/kv_store.cpp.
#include "kv_store.cuh"

#include <cuda_fp16.h>

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

}  // namespace

void mutants::kv_store_f16_one_past(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache,
                                    int64_t ctx, int64_t pos0, cudaStream_t stream) {
    const int64_t wpr = head_dim / 4, threads = (n + 1) * n_kv_head * wpr;
    one_past_kernel<<<unsigned((threads + 255) / 256), 256, 0, stream>>>(
        reinterpret_cast<const float4*>(kv), n, n_kv_head, wpr, reinterpret_cast<uint2*>(cache), ctx, pos0);
}

}  // namespace bitgate::cuda
