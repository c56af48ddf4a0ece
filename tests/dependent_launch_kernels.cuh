// Kernels of tests/dependent_launch_test.cpp (tests/dependent_launch_kernels.cu): a slow writer
// that lets dependents start at once, and a copy launched as dependent that does not wait for it.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace bitgate::test_kernels {

// dst[0 .. n) = src[0 .. n) by one block, after it allows dependents to start and spins about 20 us.
void slow_write(const float* src, float* dst, int64_t n, cudaStream_t stream);
// out = in (bytes, a multiple of 16), launched as dependent, reading in without waiting: the defect
// the test's control must see.
void copy_without_wait(const float* in, uint8_t* out, size_t bytes, cudaStream_t stream);

}  // namespace bitgate::test_kernels
