// The defective kernels behind kernels/mutants/quantize_q8_0_mutants.cpp.
#include <cuda_fp16.h>

#include <map>

#include "../quantize_q8_0.cuh"
#include "bitgate/q8_round.hpp"
#include "bitgate/spec.hpp"

namespace bitgate::cuda {

namespace {

enum class Defect { skip_last, past_end, rintf, writes_input };

template <Defect D>
__global__ void mutant_kernel(float* x, BlockQ8_0* y, int64_t nblocks) {
    const int64_t b = int64_t(blockIdx.x) * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int64_t last = D == Defect::past_end ? nblocks : nblocks - 1;  // past_end: one block too many
    if (b > last || (D == Defect::skip_last && b == nblocks - 1)) return;
    const int64_t src = b < nblocks ? b : nblocks - 1;
    const float v = x[src * QK8_0 + lane];
    float amax = fabsf(v);
    for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].qs[lane] = D == Defect::rintf ? static_cast<int8_t>(rintf(v * id)) : q8_roundf(v * id);
    if (lane == 0) y[b].d = __half_as_ushort(__float2half_rn(d));
    if (D == Defect::writes_input && lane == 0) x[src * QK8_0] = v + 1.0f;
}

template <Defect D>
int launch(const Shape& s, const DeviceIo& io) {
    const int64_t nb = s["k"] / QK8_0;
    mutant_kernel<D><<<unsigned((nb + 1 + 7) / 8), 256, 0, static_cast<cudaStream_t>(io.stream)>>>(
        const_cast<float*>(io.input<float>(0)), io.output<BlockQ8_0>(0), nb);
    return 1;
}

// Keyed on the input pointer: right the first time, stale when the same buffer holds new values.
int launch_cached(const Shape& s, const DeviceIo& io) {
    static std::map<const void*, void*> cache;
    const size_t bytes = size_t(s["k"] / QK8_0) * sizeof(BlockQ8_0);
    auto st = static_cast<cudaStream_t>(io.stream);
    auto it = cache.find(io.in[0]);
    if (it != cache.end()) {
        cudaMemcpyAsync(io.out[0], it->second, bytes, cudaMemcpyDeviceToDevice, st);
        return 0;
    }
    quantize_q8_0(io.input<float>(0), io.output<BlockQ8_0>(0), s["k"], st);
    void* keep = nullptr;
    cudaMalloc(&keep, bytes);
    cudaMemcpyAsync(keep, io.out[0], bytes, cudaMemcpyDeviceToDevice, st);
    cache[io.in[0]] = keep;
    return 1;
}

BITGATE_DEVICE("quantize_q8_0", "m_skip_last", launch<Defect::skip_last>);
BITGATE_DEVICE("quantize_q8_0", "m_past_end", launch<Defect::past_end>);
BITGATE_DEVICE("quantize_q8_0", "m_rintf", launch<Defect::rintf>);
BITGATE_DEVICE("quantize_q8_0", "m_writes_input", launch<Defect::writes_input>);
BITGATE_DEVICE("quantize_q8_0", "m_cached", launch_cached);

}  // namespace

}  // namespace bitgate::cuda
