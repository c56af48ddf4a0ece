#include "sm_count.cuh"

#include <atomic>

#include <cuda_runtime.h>

namespace bitgate::cuda {

namespace {
std::atomic<int> g_override{0};
}

int sm_count() {
    if (const int o = g_override.load(); o > 0) return o;
    static const int count = [] {
        int dev = 0, sms = 0;
        cudaGetDevice(&dev);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        return sms > 0 ? sms : 1;
    }();
    return count;
}

void set_sm_count_override(int sms) { g_override.store(sms > 0 ? sms : 0); }

}  // namespace bitgate::cuda
