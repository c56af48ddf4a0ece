#include "kv_store.cuh"

#include <cuda_fp16.h>

#include "pdl.cuh"

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    return uint32_t(__half_as_ushort(__float2half_rn(lo))) | (uint32_t(__half_as_ushort(__float2half_rn(hi))) << 16);
}

// One thread per 4 values: a float4 read of kv (token-major, contiguous across the warp) and an
// 8-byte write into the cache row of (head, position); a warp covers 128 values, a whole
// head_dim 128 row (two rows of head_dim 64), so writes are 256 contiguous bytes per row.
__global__ void kv_store_f16_kernel(const float4* __restrict__ kv, int64_t words, int64_t n_kv_head,
                                    int64_t words_per_row, uint2* __restrict__ cache, int64_t ctx, int64_t pos0) {
    wait_then_allow_dependents();  // launched as dependent (kernels/pdl.cuh): nothing is read or written before this
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= words) return;
    const int64_t row = i / words_per_row, j = i % words_per_row;  // row = t * n_kv_head + h
    const int64_t t = row / n_kv_head, h = row % n_kv_head;
    const float4 v = kv[i];
    cache[(h * ctx + pos0 + t) * words_per_row + j] = make_uint2(pack2(v.x, v.y), pack2(v.z, v.w));
}

}  // namespace

void kv_store_f16(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache, int64_t ctx,
                  int64_t pos0, cudaStream_t stream) {
    const int64_t words = n * n_kv_head * (head_dim / 4);
    if (words <= 0) return;
    launch_dependent(kv_store_f16_kernel, dim3(unsigned((words + kThreads - 1) / kThreads)), dim3(kThreads), 0, stream,
                     reinterpret_cast<const float4*>(kv), words, n_kv_head, head_dim / 4,
                     reinterpret_cast<uint2*>(cache), ctx, pos0);
}

}  // namespace bitgate::cuda
