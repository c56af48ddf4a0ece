// The defective mmq_q8_0_add launcher: the real mmq_q8_0 kernel with the add_first defect.
#include "mmq_q8_0_add.cuh"

#include "../kernels/mmq_q8_0_kernel.cuh"

namespace bitgate::cuda::mutants {

int mmq_q8_0_add_first(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, const float* bias, const float* res,
                       float* C, int64_t n, int64_t N, int64_t K, cudaStream_t stream) {
    using namespace mmq_impl;
    launch<Tile64x128, Defect::add_first>(qs, sda, w, C, n, N, K, stream, bias, res);
    return 1;
}

}  // namespace bitgate::cuda::mutants
