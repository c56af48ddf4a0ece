// cp.async: 16 bytes from global to shared memory without passing through registers; the copies
// of a commit group land in order of groups, and each thread waits for its own copies (a barrier
// after the wait makes the whole block's copies visible). Shared by the kernels that stage tiles
// (attention's pipelined decode, quantize_pad40_t). Under tests/cuda_sim.hpp (BITGATE_CUDA_SIM)
// a plain copy at issue time, and the waits do nothing.
#pragma once
#include <cstdint>
#include <cstring>

namespace bitgate::cuda {

#if !defined(BITGATE_CUDA_SIM)
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(uint32_t(__cvta_generic_to_shared(dst))),
                 "l"(src)
                 : "memory");
}
// cp_async16 for pieces smaller than a line whose other bytes a later copy reads: L2 fetches all
// 128 bytes of the line.
__device__ __forceinline__ void cp_async16_line(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(uint32_t(__cvta_generic_to_shared(dst))),
                 "l"(src)
                 : "memory");
}
// An L2 policy that marks lines evict-first (streamed data read once), for cp_async16_stream.
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}
// cp_async16 for data read once, in pieces smaller than a line: the line is kept under `policy`
// (l2_evict_first_policy) and L2 fetches all 128 bytes of it, so a later copy of its other
// bytes finds them there. Under nvcc 13.0 this form has three times run as an illegal instruction
// where other copies of the same kernel ran fine (the head_dim 64 split kernel's V copy; copies
// issued before griddepcontrol.wait: bench/RESULTS.md, 2026-12-06, twelfth; the split kernel with
// its p.v stage unrolled 32 keys deep: 2026-12-06, fourteenth). The third one could be read in the
// SASS (`cuobjdump -sass`): the copies took their policy as `desc[UR1]`, a uniform register
// nothing in the kernel writes, where a good build loads `desc[UR6]` with the policy first. A
// fourth build showed it the same way (the split kernel with `l` summed in a block of its own
// after each V stage's fmas, bench/RESULTS.md, 2026-12-08): there the copies' slot offset sat in
// an unwritten `UR0` as well, and starting the V stage loop's counter from a zero ptxas cannot
// prove uniform (the thread index shifted right by 31, in inline PTX) made it go. The device
// gate's SASS step (ci/sass-check) now fails any such read. A new use of this form, or a change
// to a kernel around it, is trusted only once that step passes and it has run on the device.
__device__ __forceinline__ void cp_async16_stream(void* dst, const void* src, uint64_t policy) {
    asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2;" ::"r"(
                     uint32_t(__cvta_generic_to_shared(dst))),
                 "l"(src), "l"(policy)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Until at most N of this thread's commit groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#else
inline void cp_async16(void* dst, const void* src) { std::memcpy(dst, src, 16); }
inline uint64_t l2_evict_first_policy() { return 0; }
inline void cp_async16_line(void* dst, const void* src) { std::memcpy(dst, src, 16); }
inline void cp_async16_stream(void* dst, const void* src, uint64_t) { std::memcpy(dst, src, 16); }
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}
#endif

}  // namespace bitgate::cuda
