// The loop shared by the exhaustive host == device proofs (tests/*_device.cu): the device
// computes a function of every 32-bit pattern, 2^28 patterns at a time, and the host's threads
// compare shares of each chunk with the host's function. Included by .cu files only.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace bitgate::test {

// launch(base, count, out) enqueues the kernel that writes out[i] = f(base + i) on the device;
// host(bits) is the host's f. Returns how many of the 2^32 patterns differ (~0 when a CUDA call
// failed) and, in first_bad, the lowest one that does.
template <class T, class Launch, class Host>
uint64_t exhaustive_mismatches(Launch launch, Host host, uint64_t* first_bad) {
    const uint32_t chunk = 1u << 28;
    T* d = nullptr;
    if (cudaMalloc(&d, chunk * sizeof(T)) != cudaSuccess) return ~0ull;
    std::vector<T> h(chunk);
    uint64_t bad = 0;
    *first_bad = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += chunk) {
        launch(uint32_t(base), chunk, d);
        if (cudaMemcpy(h.data(), d, chunk * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
            cudaFree(d);
            return ~0ull;
        }
        const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
        std::vector<uint64_t> counts(nt, 0), firsts(nt, ~0ull);
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < nt; ++t)
            ts.emplace_back([&, t] {
                for (uint64_t i = t; i < chunk; i += nt)
                    if (host(uint32_t(base + i)) != h[i]) {
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

}  // namespace bitgate::test
