// The defective proj_q8_0 launchers behind mutants/proj_q8_0.cpp.
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/stream.hpp"

namespace bitgate::cuda::mutants {

enum class ProjQ8Defect {
    tree_ascending,    // the warp tree applies offsets 1, 2, 4, 8, 16
    width_off_by_one,  // the width switch one block late: bpr 33 on 32 threads, 65 on 64
    ragged_store,      // the ragged last CUDA block stores up to 3 rows past n
};

// The per-call v2 path (quantize into scratch, project, per matrix) with the defect: 2g launches.
int proj_q8_0_per_call_defective(ProjQ8Defect defect, const float* x, const BlockQ8_0* w, float* y, int64_t n,
                                 int64_t k, int64_t g, BlockQ8_0* scratch, cudaStream_t stream);

// A hoisted path that keeps its own quantized activation and re-quantizes only when x is at a
// new address: the pointer-identity guard the design forbids.
int proj_q8_0_hoisted_stale(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                            cudaStream_t stream);

}  // namespace bitgate::cuda::mutants
