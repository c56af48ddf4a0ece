// Exhaustive host == device check of f32 -> f16 (round to nearest even): the device converts
// every f32 bit pattern with __float2half_rn, the host compares with f32_to_f16_rn.
#include <cuda_fp16.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "bitgate/f16.hpp"

namespace {

__global__ void convert_all(uint32_t base, uint16_t* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half_as_ushort(__float2half_rn(__uint_as_float(base + i)));
}

}  // namespace

uint64_t f16_device_mismatches(uint64_t* first_bad) {
    const uint32_t chunk = 1u << 28;
    uint16_t* d = nullptr;
    if (cudaMalloc(&d, chunk * sizeof(uint16_t)) != cudaSuccess) return ~0ull;
    std::vector<uint16_t> h(chunk);
    uint64_t bad = 0;
    *first_bad = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
        convert_all<<<chunk / 256, 256>>>(uint32_t(base), d, chunk);
        if (cudaMemcpy(h.data(), d, chunk * sizeof(uint16_t), cudaMemcpyDeviceToHost) != cudaSuccess) return ~0ull;
        const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
        std::vector<uint64_t> counts(nt, 0), firsts(nt, ~0ull);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < nt; ++t)
            ts.emplace_back([&, t] {
                for (uint64_t i = t; i < chunk; i += nt)
                    if (bitgate::f32_to_f16_rn(bitgate::f32_from_bits(uint32_t(base + i))) != h[i]) {
                        if (!counts[t]++) firsts[t] = base + i;
                    }
            });
        for (auto& t : ts) t.join();
        for (unsigned t = 0; t < nt; ++t) {
            if (counts[t] && (!bad || firsts[t] < *first_bad)) *first_bad = firsts[t];
            bad += counts[t];
        }
    }
    cudaFree(d);
    return bad;
}
