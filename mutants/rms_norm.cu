// The defective kernels behind mutants/rms_norm.cpp: a fused norm in two phases (each warp's row
// scale to shared memory, a barrier, then the block's 8 rows as one flat range of words), with one
// defect switched on. The real kernel (kernels/rms_norm.cu) is one warp per row without shared
// memory; the defects are the same whichever way the work is shared out.
#include "rms_norm.cuh"

#include "../kernels/rms_norm_common.cuh"
#include "bitgate/pad40.hpp"
#include "pad40_defects.cuh"

namespace bitgate::cuda {

namespace {

enum class Bug { rsqrtf, tail_unwritten, other_block_row };

template <Bug B>
__global__ void fused_kernel(const float4* x, const float4* w, float4* y, int64_t n, int64_t d, uint8_t* qs,
                             uint32_t* sda) {
    __shared__ float s_scale[kRmsRowsPerBlock];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t row0 = int64_t(blockIdx.x) * kRmsRowsPerBlock;
    const int64_t groups = d / 4, nchunk = d / kPad40Chunk;
    if (row0 + warp < n) {
        const float ss = rms_row_sumsq(x + (row0 + warp) * groups, groups, lane);
        const float scale = B == Bug::rsqrtf ? rsqrtf(ss / float(d) + kRmsEps) : rms_scale(ss, d);
        if (lane == 0) s_scale[warp] = scale;
    }
    __syncthreads();

    const int64_t words = kRmsRowsPerBlock * groups;
    for (int64_t base = 0; base < words; base += kRmsThreads) {
        const int64_t i = base + threadIdx.x;
        const bool in = i < words;
        const int64_t r = in ? i / groups : 0, g = in ? i % groups : 0, row = row0 + r;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (in && row < n) {
            v = rms_apply(x[row * groups + g], s_scale[r], w[g]);
            y[row * groups + g] = v;
            if (B == Bug::other_block_row) v = __ldcg(y + ((row + 8) % n) * groups + g);  // L2, not L1
        }
        constexpr mutant::Defect D = B == Bug::tail_unwritten ? mutant::Defect::tail_unwritten : mutant::Defect::none;
        mutant::quantize_store<D>(v, row, n, g / kPad40Words, nchunk, in, qs, sda);
    }
}

template <Bug B>
void launch_fused(const float* x, const float* w, float* y, int64_t n, int64_t d, uint8_t* qs, uint32_t* sda,
                  cudaStream_t stream) {
    fused_kernel<B><<<unsigned(pad40_tokens(n) / kRmsRowsPerBlock), kRmsThreads, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(w), reinterpret_cast<float4*>(y), n, d,
        qs, sda);
}

}  // namespace

void mutants::rms_norm_quant_f32_t_defective(RmsNormDefect defect, const float* x, const float* w, float* y, int64_t n,
                                             int64_t d, uint8_t* qs, uint32_t* sda, cudaStream_t stream) {
    switch (defect) {
        case RmsNormDefect::rsqrtf: launch_fused<Bug::rsqrtf>(x, w, y, n, d, qs, sda, stream); break;
        case RmsNormDefect::tail_unwritten: launch_fused<Bug::tail_unwritten>(x, w, y, n, d, qs, sda, stream); break;
        case RmsNormDefect::other_block_row: launch_fused<Bug::other_block_row>(x, w, y, n, d, qs, sda, stream); break;
    }
}

}  // namespace bitgate::cuda
