// The read ceiling: 16-byte loads over a buffer far larger than L2, with integer work only,
// so the timing is the DRAM read rate a memory-bound kernel can hope for.
#include <cstdint>

namespace bitgate::cuda {

__global__ void read_ceiling_kernel(const uint4* __restrict__ p, size_t n, uint32_t* __restrict__ sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;  // keeps the loads; almost never stores
}

void read_ceiling(const void* p, size_t bytes, uint32_t* sink, int sms) {
    read_ceiling_kernel<<<sms * 8, 512>>>(static_cast<const uint4*>(p), bytes / 16, sink);
}

}  // namespace bitgate::cuda
