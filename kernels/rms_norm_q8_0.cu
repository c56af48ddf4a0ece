#include "rms_norm_q8_0.cuh"

#include "rms_norm_q8_0_kernel.cuh"

namespace bitgate::cuda {

void rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d,
                   cudaStream_t stream) {
    rms_q8::launch_rms_norm_q8_0<rms_q8::Defect::none>(x, w, y, xq, n, d, stream);
}

}  // namespace bitgate::cuda
