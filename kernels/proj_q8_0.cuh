// proj_q8_0: decode projection GEMV, y[n] = W[n][k] x, Q8_0 weights times a Q8_0 activation.
#pragma once
#include "bitgate/stream.hpp"

#include <cstdint>

#include "bitgate/formats.hpp"

namespace bitgate::cuda {

// How v2 brings weights to the lanes: `direct` rebuilds words from 16-bit loads at any alignment;
// `staged` copies 16-byte-aligned rounds of W blocks through shared memory and needs every matrix
// 16-byte aligned and k % 256 == 0. `automatic` takes staged wherever it is allowed; staged asked
// for where it is not allowed runs direct. Same bytes either way.
enum class ProjQ8Path { automatic, direct, staged };

// v2 and fused4 launch as dependents on sm_90 (kernels/pdl.cuh): a projection may start while
// the kernel before it in the stream runs, fetching its weights, and waits for that kernel to
// complete before it reads xq or writes y. So w must not be written by kernels still running
// in the stream when the projection is enqueued (weights are loaded once, before any of them).
//
// Projections of an activation already quantized to xq (k/32 blocks): one launch each.
// w is [n][k/32] blocks; fused4 reads four such matrices and writes four y.
void proj_q8_0_v1(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t k, cudaStream_t stream);
void proj_q8_0_v2(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t k, cudaStream_t stream,
                  ProjQ8Path path = ProjQ8Path::automatic);
// v2 with the add epilogue: y[r] = (W xq)[r] + add[r], one rounding after the whole sum, so the
// bytes of v2 followed by add_f32(y, add): the bias of q/k/v and the residual of o and down, fused
// (family proj_q8_0_add). add may equal y (the residual stream updated in place).
void proj_q8_0_v2_add(const BlockQ8_0* w, const BlockQ8_0* xq, const float* add, float* y, int64_t n, int64_t k,
                      cudaStream_t stream);
void proj_q8_0_fused4(const BlockQ8_0* const w[4], const BlockQ8_0* xq, float* const y[4], int64_t n, int64_t k,
                      cudaStream_t stream, ProjQ8Path path = ProjQ8Path::automatic);
// The pair of one shape (the feed-forward's gate and up): fused4's kernel over two matrices.
void proj_q8_0_fused2(const BlockQ8_0* const w[2], const BlockQ8_0* xq, float* const y[2], int64_t n, int64_t k,
                      cudaStream_t stream, ProjQ8Path path = ProjQ8Path::automatic);

// What a decoder calls, from the f32 activation x (k floats) and g matrices w [g][n][k/32] into
// y [g][n]. Each returns the number of launches it enqueued.
//
// Per call: every matrix quantizes x into the call's own scratch and projects: 2g launches.
int proj_q8_0_per_call_v1(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                          BlockQ8_0* scratch, cudaStream_t stream);
int proj_q8_0_per_call_v2(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                          BlockQ8_0* scratch, cudaStream_t stream);
// Hoisted: x is quantized once into the caller-owned xq (proj_q8_0_hoist: 1 launch), which every
// projection of the group then reads (proj_q8_0_project_hoisted: g launches, one per matrix;
// proj_q8_0_project_fused4 and _fused2: 1 launch for a group of four or two). The same quantize
// and the same projection as the per-call path. The engine registers the hoist as the variants'
// preparation.
int proj_q8_0_hoist(const float* x, BlockQ8_0* xq, int64_t k, cudaStream_t stream);
int proj_q8_0_project_hoisted(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                              cudaStream_t stream);
int proj_q8_0_project_fused4(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k,
                             cudaStream_t stream);
int proj_q8_0_project_fused2(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k,
                             cudaStream_t stream);
// A whole hoisted group from x: hoist + project, 1 + g launches (fused4: 2).
int proj_q8_0_hoisted(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g, BlockQ8_0* xq,
                      cudaStream_t stream);
int proj_q8_0_hoisted_fused4(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, BlockQ8_0* xq,
                             cudaStream_t stream);

}  // namespace bitgate::cuda
