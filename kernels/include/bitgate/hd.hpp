// Functions shared by host models and kernels are compiled twice from one definition.
#pragma once
#if defined(__CUDACC__)
#define BITGATE_HD __host__ __device__ __forceinline__
#else
#define BITGATE_HD inline
#endif
