#include "gpus.hpp"

#include <cuda_runtime.h>

#include "device.hpp"

namespace bitgate {

// Counting and naming the devices initialises the runtime but makes no context on any of them:
// the workers, each with its own CUDA_VISIBLE_DEVICES, are the ones that use them.
VisibleGpus visible_gpus() {
    VisibleGpus g;
    g.why_none = gpu_missing();
    if (!g.why_none.empty()) return g;
    if (cudaGetDeviceCount(&g.count) != cudaSuccess) g.count = 0;
    for (int i = 0; i < g.count; ++i) {
        cudaDeviceProp p{};
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
            g.names.push_back("device " + std::to_string(i));
            continue;
        }
        g.names.push_back(std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
                          std::to_string(p.multiProcessorCount) + " SMs, " + std::to_string(p.l2CacheSize >> 20) + " MiB L2");
    }
    if (g.count == 0) g.why_none = "no CUDA device (the NVIDIA driver sees none)";
    return g;
}

}  // namespace bitgate
