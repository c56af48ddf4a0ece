// The defective mmq_q8_0 launchers: the real kernel template with one defect switched on.
#include "mmq_q8_0.cuh"

#include "../kernels/mmq_q8_0_kernel.cuh"

namespace bitgate::cuda::mutants {

void mmq_q8_0_defective(MmqDefect defect, const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C,
                        int64_t n, int64_t N, int64_t K, cudaStream_t stream) {
    using namespace mmq_impl;
    switch (defect) {
        case MmqDefect::padded_token: launch<Tile64x128, Defect::writes_padded_token>(qs, sda, w, C, n, N, K, stream); break;
        case MmqDefect::past_n: launch<Tile64x64, Defect::writes_past_n>(qs, sda, w, C, n, N, K, stream); break;
        case MmqDefect::chunk_order: launch<Tile64x128, Defect::chunk_order>(qs, sda, w, C, n, N, K, stream); break;
        case MmqDefect::no_wait: launch<Tile64x128, Defect::no_cp_async_wait>(qs, sda, w, C, n, N, K, stream); break;
    }
}

}  // namespace bitgate::cuda::mutants
