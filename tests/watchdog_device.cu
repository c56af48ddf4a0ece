// The hang the watchdog exists for: a kernel spinning on a flag that nothing sets, and a host
// that waits for it (tests/watchdog_test.cpp ends the process from the watchdog).
#include <cuda_runtime.h>

namespace bitgate {

namespace {

__global__ void spin_until_set(const volatile int* flag) {
    while (*flag == 0) __nanosleep(1000);
}

}  // namespace

void spin_on_device_for_ever() {
    int* flag = nullptr;
    if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess) return;
    cudaMemset(flag, 0, sizeof(int));
    spin_until_set<<<1, 1>>>(flag);
    cudaDeviceSynchronize();  // never returns: the flag stays 0
}

}  // namespace bitgate
