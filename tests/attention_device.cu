// Device side of the attention tests: the forward pass's entry point, bitgate::cuda::attention_f16kv
// (decode or prefill by shape, its own stream-ordered workspace), on poisoned output buffers.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/attention.cuh"

namespace bitgate::test {

std::string attention_device(const std::vector<float>& q, const std::vector<uint16_t>& k,
                             const std::vector<uint16_t>& v, int64_t n_q, int64_t L, int64_t ctx, int64_t n_head,
                             int64_t n_kv_head, int64_t head_dim, uint8_t poison, std::vector<float>& out) {
    float *dq = nullptr, *dout = nullptr;
    uint16_t *dk = nullptr, *dv = nullptr;
    const size_t out_bytes = size_t(n_q * n_head * head_dim) * 4;
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    cudaMalloc(&dq, q.size() * 4);
    cudaMalloc(&dk, k.size() * 2);
    cudaMalloc(&dv, v.size() * 2);
    cudaMalloc(&dout, out_bytes);
    cudaMemcpy(dq, q.data(), q.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dk, k.data(), k.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dv, v.data(), v.size() * 2, cudaMemcpyHostToDevice);
    cudaMemset(dout, poison, out_bytes);
    cuda::attention_f16kv(dq, dk, dv, n_q, L, ctx, n_head, n_kv_head, head_dim, dout, stream);
    cudaStreamSynchronize(stream);
    out.resize(out_bytes / 4);
    cudaMemcpy(out.data(), dout, out_bytes, cudaMemcpyDeviceToHost);
    const cudaError_t err = cudaGetLastError();
    cudaFree(dq);
    cudaFree(dk);
    cudaFree(dv);
    cudaFree(dout);
    cudaStreamDestroy(stream);
    return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

}  // namespace bitgate::test
