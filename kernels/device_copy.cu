#include "device_copy.cuh"

#include <cuda_runtime.h>

namespace bitgate::cuda {

void copy_on_device(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
}

std::vector<int32_t> read_back_i32(const int32_t* dev, int64_t n, cudaStream_t stream) {
    std::vector<int32_t> host(size_t(n > 0 ? n : 0));
    if (n > 0) {
        cudaMemcpyAsync(host.data(), dev, size_t(n) * 4, cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
    }
    return host;
}

}  // namespace bitgate::cuda
