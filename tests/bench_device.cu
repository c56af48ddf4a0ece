// Launchers for the back-to-back capture's device test: one sound, the others each doing one
// thing a graph cannot hold (tests/bench_test.cpp says which).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"

namespace {

__global__ void bump(unsigned* p) { p[threadIdx.x] += 1u; }

}  // namespace

// mode: 0 sound (one kernel on io.stream); 1 waits for its stream; 2 launches on the legacy
// default stream; 3 copies its output to the host; 4 launches on a non-blocking stream of its
// own; 5 throws; 6 reports two launches but makes one.
std::string bench_capture_probe(int mode) {
    unsigned* buf = nullptr;
    if (cudaMalloc(&buf, 2 * 32 * sizeof(unsigned)) != cudaSuccess) return "probe: cudaMalloc failed";
    std::vector<bitgate::DeviceIo> sets(2);
    for (int i = 0; i < 2; ++i) sets[size_t(i)].out.push_back(buf + 32 * i);
    cudaStream_t own = nullptr;
    cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    const bitgate::DeviceLauncher launch = [mode, own](const bitgate::Shape&, const bitgate::DeviceIo& io) {
        auto* p = static_cast<unsigned*>(io.out[0]);  // a probe with no family: its one output by position
        const auto stream = static_cast<cudaStream_t>(io.stream);
        switch (mode) {
            case 2: bump<<<1, 32>>>(p); return 1;
            case 4: bump<<<1, 32, 0, own>>>(p); return 1;
            case 5: throw std::runtime_error("probe: bad input");
            default: bump<<<1, 32, 0, stream>>>(p); break;
        }
        if (mode == 1) cudaStreamSynchronize(stream);
        if (mode == 3) {
            unsigned host[32];
            cudaMemcpy(host, p, sizeof host, cudaMemcpyDeviceToHost);
        }
        return mode == 6 ? 2 : 1;
    };
    std::string why;
    try {
        why = bitgate::back_to_back_capture_problem(launch, bitgate::Shape{}, sets, 4, mode == 6 ? 2 : 1);
    } catch (const std::exception& e) {
        why = std::string("probe threw: ") + e.what();
    }
    cudaStreamSynchronize(own);
    cudaStreamDestroy(own);
    cudaFree(buf);
    return why;
}
