// Programmatic dependent launch (sm_90 and later): a kernel launched with programmatic stream
// serialization may start while the kernel before it in its stream is still running, and must
// call wait_for_producer() before it reads anything that kernel (or any before it) may write, and
// before it writes anything they may read. Scheduling only: no value and no order of arithmetic
// depends on it. Launched this way: the decode projections, the attention combine,
// quantize_pad40_t, and the decode step's small kernels (rms_norm_f32, rms_norm_q8_0,
// quantize_q8_0, rope, kv_store, swiglu_f32, swiglu_q8_0; tests/dependent_launch_test.cpp fails
// any of them that reads before its wait).
#pragma once
#if defined(BITGATE_CUDA_SIM)
// Under tests/cuda_sim.hpp blocks run one at a time on the CPU: nothing to overlap.
namespace bitgate::cuda {
inline void wait_for_producer() {}
inline void allow_dependents() {}
inline void wait_then_allow_dependents() {}
}  // namespace bitgate::cuda
#else
#include <cuda_runtime.h>

#include <map>
#include <mutex>

namespace bitgate::cuda {

// Blocks until every kernel this one may overlap has completed and its writes are visible.
__device__ __forceinline__ void wait_for_producer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next kernel in the stream, if launched as dependent, start now. Safe wherever that
// kernel waits (wait_for_producer) before touching what this one reads or writes.
__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// How most dependent kernels start: nothing read or written before the producer is done, and the
// next kernel let in at once (it waits in its turn before touching what this one uses).
__device__ __forceinline__ void wait_then_allow_dependents() {
    wait_for_producer();
    allow_dependents();
}

// True when the kernel was compiled for sm_90 or later (its PTX version), so its waits are real
// instructions: a kernel built from older PTX has them compiled out and must launch in order.
template <class Kernel>
bool compiled_with_waits(Kernel kernel) {
    static std::mutex mu;
    static std::map<const void*, bool> cache;
    std::lock_guard<std::mutex> lock(mu);
    auto [it, fresh] = cache.try_emplace(reinterpret_cast<const void*>(kernel), false);
    if (fresh) {
        cudaFuncAttributes a{};
        it->second = cudaFuncGetAttributes(&a, kernel) == cudaSuccess && a.ptxVersion >= 90;
    }
    return it->second;
}

// kernel<<<grid, block, smem, stream>>>(args...), launched as dependent where its waits exist.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                      Args... args) {
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = compiled_with_waits(kernel) ? 1 : 0;
    cudaLaunchKernelEx(&cfg, kernel, args...);
}

}  // namespace bitgate::cuda
#endif
