// Exhaustive host == device check of the quantizers' rounding: the device rounds every f32 bit
// pattern with pad40_round_sat (one cvt.rni.sat.s8.f32), the host compares with the model's
// pad40_round (rintf, clamp to [-128, 127] in float, NaN -> 0).
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <thread>
#include <vector>

#include "../kernels/pad40_quant.cuh"
#include "bitgate/pad40.hpp"

namespace {

__global__ void round_all(uint32_t base, int8_t* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = bitgate::cuda::pad40_round_sat(__uint_as_float(base + i));
}

float f32_of(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

}  // namespace

uint64_t pad40_round_device_mismatches(uint64_t* first_bad) {
    const uint32_t chunk = 1u << 28;
    int8_t* d = nullptr;
    if (cudaMalloc(&d, chunk) != cudaSuccess) return ~0ull;
    std::vector<int8_t> h(chunk);
    uint64_t bad = 0;
    *first_bad = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
        round_all<<<chunk / 256, 256>>>(uint32_t(base), d, chunk);
        if (cudaMemcpy(h.data(), d, chunk, cudaMemcpyDeviceToHost) != cudaSuccess) return ~0ull;
        const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
        std::vector<uint64_t> counts(nt, 0), firsts(nt, ~0ull);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < nt; ++t)
            ts.emplace_back([&, t] {
                for (uint64_t i = t; i < chunk; i += nt)
                    if (bitgate::pad40_round(f32_of(uint32_t(base + i))) != h[i]) {
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
