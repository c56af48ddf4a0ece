// Defective proj_q8_0 launchers: the real kernels with one defect each. The engine must report
// each with the verdict its spec (mutants/proj_q8_0.cpp) expects.
#include "proj_q8_0.cuh"

#include <cuda_runtime.h>

#include "../kernels/proj_q8_0.cuh"
#include "../kernels/proj_q8_0_impl.cuh"
#include "../kernels/quantize_q8_0.cuh"

namespace bitgate::cuda::mutants {

namespace {

using proj_q8_0_detail::launch_v2;
using proj_q8_0_detail::Mats;
using proj_q8_0_detail::Sound;

struct TreeAscending : Sound {
    static constexpr bool tree_ascending = true;
};
struct StorePastN : Sound {
    static constexpr bool store_past_n = true;
};

// The per-call path with a projection that takes the width explicitly.
template <class Defect>
int per_call(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g, BlockQ8_0* scratch,
             int (*width)(int64_t), cudaStream_t stream) {
    const int64_t bpr = k / QK8_0;
    for (int64_t m = 0; m < g; ++m) {
        cuda::quantize_q8_0(x, scratch, k, stream);
        launch_v2<Defect>(Mats{{w + m * n * bpr}, {y + m * n}, 1}, scratch, n, bpr, width(bpr), stream);
    }
    return int(2 * g);
}

int v2_width(int64_t bpr) { return proj_q8_0_v2_width(bpr); }
// Off by one at both switch points: bpr 33 gets 32 threads, bpr 65 gets 64.
int width_off_by_one(int64_t bpr) { return bpr <= 33 ? 32 : bpr <= 65 ? 64 : 128; }

}  // namespace

int proj_q8_0_per_call_defective(ProjQ8Defect defect, const float* x, const BlockQ8_0* w, float* y, int64_t n,
                                 int64_t k, int64_t g, BlockQ8_0* scratch, cudaStream_t stream) {
    switch (defect) {
        case ProjQ8Defect::tree_ascending: return per_call<TreeAscending>(x, w, y, n, k, g, scratch, v2_width, stream);
        case ProjQ8Defect::width_off_by_one: return per_call<Sound>(x, w, y, n, k, g, scratch, width_off_by_one, stream);
        case ProjQ8Defect::ragged_store: return per_call<StorePastN>(x, w, y, n, k, g, scratch, v2_width, stream);
    }
    return 0;
}

// New contents at the same address are missed.
int proj_q8_0_hoisted_stale(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                            cudaStream_t stream) {
    static const float* cached_x = nullptr;
    static int64_t cached_k = 0;
    static BlockQ8_0* kept = nullptr;
    const int64_t bpr = k / QK8_0;
    int launches = 0;
    if (kept == nullptr && cudaMalloc(&kept, size_t(131072 / QK8_0) * sizeof(BlockQ8_0)) != cudaSuccess) return 0;
    if (x != cached_x || k != cached_k) {
        cuda::quantize_q8_0(x, kept, k, stream);
        cached_x = x;
        cached_k = k;
        ++launches;
    }
    for (int64_t m = 0; m < g; ++m) cuda::proj_q8_0_v2(w + m * n * bpr, kept, y + m * n, n, k, stream);
    return launches + int(g);
}

}  // namespace bitgate::cuda::mutants
