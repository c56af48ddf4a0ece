// Defective proj_q8_0 launchers: the real kernels with one defect each. The engine must report
// each with the verdict its spec (proj_q8_0_mutants.cpp) expects.
#include <cuda_runtime.h>

#include "../proj_q8_0.cuh"
#include "../proj_q8_0_impl.cuh"
#include "../quantize_q8_0.cuh"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;
using cuda::proj_q8_0_detail::launch_v2;
using cuda::proj_q8_0_detail::Mats;
using cuda::proj_q8_0_detail::Sound;

struct TreeAscending : Sound {
    static constexpr bool tree_ascending = true;
};
struct StorePastN : Sound {
    static constexpr bool store_past_n = true;
};

cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// The per-call path with a projection that takes the width explicitly.
template <class Defect>
int per_call(const Shape& s, const DeviceIo& io, int (*width)(int64_t)) {
    const int64_t n = s["n"], k = s["k"], g = s["g"], bpr = k / QK8_0;
    const float* x = io.input<float>(0);
    const BlockQ8_0* w = io.input<BlockQ8_0>(1);
    float* y = io.output<float>(0);
    BlockQ8_0* scratch = io.workspace<BlockQ8_0>(1);
    for (int64_t m = 0; m < g; ++m) {
        cuda::quantize_q8_0(x, scratch, k, stream_of(io));
        launch_v2<Defect>(Mats{{w + m * n * bpr}, {y + m * n}, 1}, scratch, n, bpr, width(bpr), stream_of(io));
    }
    return int(2 * g);
}

int v2_width(int64_t bpr) { return proj_q8_0_v2_width(bpr); }
// Off by one at both switch points: bpr 33 gets 32 threads, bpr 65 gets 64.
int width_off_by_one(int64_t bpr) { return bpr <= 33 ? 32 : bpr <= 65 ? 64 : 128; }

BITGATE_DEVICE("proj_q8_0", "tree_ascending", [](const Shape& s, const DeviceIo& io) {
    return per_call<TreeAscending>(s, io, v2_width);
});

BITGATE_DEVICE("proj_q8_0", "width_off_by_one", [](const Shape& s, const DeviceIo& io) {
    return per_call<Sound>(s, io, width_off_by_one);
});

BITGATE_DEVICE("proj_q8_0", "ragged_store", [](const Shape& s, const DeviceIo& io) {
    return per_call<StorePastN>(s, io, v2_width);
});

// Matrices 1 and 2 of the fused group passed in each other's place; hoisted like fused4 itself:
// the quantize is its preparation, the launch the fused projection.
int fused4_swapped(const Shape& s, const DeviceIo& io) {
    const int64_t n = s["n"], k = s["k"], mat = n * (k / QK8_0);
    const BlockQ8_0* w = io.input<BlockQ8_0>(1);
    float* y = io.output<float>(0);
    const BlockQ8_0* ws[4] = {w, w + 2 * mat, w + mat, w + 3 * mat};
    float* ys[4] = {y, y + n, y + 2 * n, y + 3 * n};
    cuda::proj_q8_0_fused4(ws, io.workspace<BlockQ8_0>(0), ys, n, k, stream_of(io));
    return 1;
}
BITGATE_DEVICE_PREPARE("proj_q8_0", "fused4_swapped", [](const Shape& s, const DeviceIo& io) {
    return cuda::proj_q8_0_hoist(io.input<float>(0), io.workspace<BlockQ8_0>(0), s["k"], stream_of(io));
});
BITGATE_DEVICE("proj_q8_0", "fused4_swapped", fused4_swapped);

// Keeps its own quantized activation and re-quantizes only when x is at a new address: the
// pointer-identity guard the design forbids. New contents at the same address are missed.
int hoisted_stale(const Shape& s, const DeviceIo& io) {
    static const float* cached_x = nullptr;
    static int64_t cached_k = 0;
    static BlockQ8_0* kept = nullptr;
    const int64_t n = s["n"], k = s["k"], g = s["g"], bpr = k / QK8_0;
    int launches = 0;
    if (kept == nullptr && cudaMalloc(&kept, size_t(131072 / QK8_0) * sizeof(BlockQ8_0)) != cudaSuccess) return 0;
    if (io.input<float>(0) != cached_x || k != cached_k) {
        cuda::quantize_q8_0(io.input<float>(0), kept, k, stream_of(io));
        cached_x = io.input<float>(0);
        cached_k = k;
        ++launches;
    }
    for (int64_t m = 0; m < g; ++m)
        cuda::proj_q8_0_v2(io.input<BlockQ8_0>(1) + m * n * bpr, kept, io.output<float>(0) + m * n, n, k, stream_of(io));
    return launches + int(g);
}
BITGATE_DEVICE("proj_q8_0", "hoisted_stale", hoisted_stale);

}  // namespace
