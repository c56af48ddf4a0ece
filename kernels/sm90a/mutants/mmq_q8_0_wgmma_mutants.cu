// The defective mmq_q8_0/wgmma launcher behind mutants/mmq_q8_0.cpp: the real sm_90a kernel with
// one defect switched on. It sits here, not in mutants/, because it is compiled for sm_90a like the
// kernel (cmake/sm90a.cmake) and linked where bitgate_mutants is; it exists exactly where the
// kernel is built (BITGATE_HAVE_SM90A).
#include "../../../mutants/mmq_q8_0.cuh"
#include "../mmq_q8_0_wgmma_kernel.cuh"

namespace bitgate::cuda::mutants {

void mmq_q8_0_wgmma_defective(WgmmaDefect defect, const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w,
                              float* C, int64_t n, int64_t N, int64_t K, cudaStream_t stream, const float* bias,
                              const float* res) {
    using namespace mmq_wgmma;
    switch (defect) {
        case WgmmaDefect::chunk_order:
            launch<Pipeline::overlapped, Defect::chunk_order>(qs, sda, w, C, n, N, K, stream, bias, res);
            break;
        case WgmmaDefect::ready_early:
            launch<Pipeline::overlapped, Defect::ready_early>(qs, sda, w, C, n, N, K, stream, bias, res);
            break;
        case WgmmaDefect::add_first:
            launch<Pipeline::overlapped, Defect::add_first>(qs, sda, w, C, n, N, K, stream, bias, res);
            break;
    }
}

}  // namespace bitgate::cuda::mutants
