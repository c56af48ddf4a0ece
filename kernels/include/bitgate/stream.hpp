// cudaStream_t without the CUDA headers: the launcher declarations in kernels/<family>.cuh are
// plain C++, included by the family specs, which the host compiler builds with or without CUDA.
// This is the CUDA runtime's own declaration; repeating a typedef of the same type is allowed.
#pragma once

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
