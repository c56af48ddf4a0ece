// Host == device for the rope cos/sin table: every position 0..32767 and every pair of a head.
#include <cstdint>
#include <string>
#include <vector>

#include "bitgate/rope_table.hpp"

namespace {

__global__ void table_all(int64_t head_dim, float base, float* c, float* s) {
    const int64_t half = head_dim / 2;
    const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (g >= 32768 * half) return;
    bitgate::rope_cos_sin(int32_t(g / half), g % half, head_dim, base, &c[g], &s[g]);
}

}  // namespace

uint64_t rope_table_device_mismatches(int64_t head_dim, float base, std::string* first) {
    const int64_t half = head_dim / 2, count = 32768 * half;
    float *dc = nullptr, *ds = nullptr;
    if (cudaMalloc(&dc, size_t(count) * 4) != cudaSuccess || cudaMalloc(&ds, size_t(count) * 4) != cudaSuccess) {
        *first = "cudaMalloc failed";
        return ~0ull;
    }
    table_all<<<unsigned((count + 255) / 256), 256>>>(head_dim, base, dc, ds);
    std::vector<float> c(static_cast<size_t>(count)), s(static_cast<size_t>(count));
    cudaMemcpy(c.data(), dc, size_t(count) * 4, cudaMemcpyDeviceToHost);
    if (cudaMemcpy(s.data(), ds, size_t(count) * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
        *first = "kernel or copy failed";
        return ~0ull;
    }
    cudaFree(dc);
    cudaFree(ds);
    uint64_t bad = 0;
    for (int64_t g = 0; g < count; ++g) {
        float hc, hs;
        bitgate::rope_cos_sin(int32_t(g / half), g % half, head_dim, base, &hc, &hs);
        if (__builtin_memcmp(&hc, &c[size_t(g)], 4) != 0 || __builtin_memcmp(&hs, &s[size_t(g)], 4) != 0) {
            if (!bad++) *first = "pos " + std::to_string(g / half) + " pair " + std::to_string(g % half);
        }
    }
    return bad;
}
