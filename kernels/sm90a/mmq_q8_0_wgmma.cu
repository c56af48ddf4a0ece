// mmq_q8_0, Hopper variant `wgmma`: the plain launcher. The kernel and its design are in
// mmq_q8_0_wgmma_kernel.cuh; built for sm_90a only (cmake/sm90a.cmake). specs/mmq_q8_0.cpp makes
// it the variant's launcher where it is built; elsewhere the variant has no device launcher and
// the engine skips its device checks with that reason.
#include "mmq_q8_0_wgmma.cuh"

#include "mmq_q8_0_wgmma_kernel.cuh"

namespace bitgate::cuda {

void mmq_q8_0_wgmma(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
                    int64_t K, bool overlap, cudaStream_t stream, const float* bias, const float* res) {
    using namespace mmq_wgmma;
    if (overlap)
        launch<Pipeline::overlapped>(qs, sda, w, C, n, N, K, stream, bias, res);
    else
        launch<Pipeline::serial>(qs, sda, w, C, n, N, K, stream, bias, res);
}

bool mmq_q8_0_wgmma_runs_here() { return mmq_wgmma::unsupported_here().empty(); }

}  // namespace bitgate::cuda
