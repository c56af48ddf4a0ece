// The defective kernels behind mutants/rms_norm_q8_0.cpp: the real kernel's template
// (kernels/rms_norm_q8_0_kernel.cuh) with one defect switched on.
#include "rms_norm_q8_0.cuh"

#include "../kernels/rms_norm_q8_0_kernel.cuh"

namespace bitgate::cuda {

void mutants::rms_norm_q8_0_defective(RmsNormQ8Defect defect, const float* x, const float* w, float* y, BlockQ8_0* xq,
                                      int64_t n, int64_t d, cudaStream_t stream) {
    using rms_q8::Defect;
    switch (defect) {
        case RmsNormQ8Defect::quantize_x:
            rms_q8::launch_rms_norm_q8_0<Defect::quantize_x>(x, w, y, xq, n, d, stream);
            break;
        case RmsNormQ8Defect::last_block:
            rms_q8::launch_rms_norm_q8_0<Defect::last_block>(x, w, y, xq, n, d, stream);
            break;
    }
}

}  // namespace bitgate::cuda
