// The defective kernels behind mutants/swiglu_q8_0.cpp: the real kernel's template
// (kernels/swiglu_q8_0_kernel.cuh) with one defect switched on.
#include "swiglu_q8_0.cuh"

#include "../kernels/swiglu_q8_0_kernel.cuh"

namespace bitgate::cuda {

void mutants::swiglu_q8_0_defective(SwigluQ8Defect defect, const float* g, const float* u, float* out, BlockQ8_0* xq,
                                    int64_t n, int64_t f, cudaStream_t stream) {
    using swiglu_q8::Defect;
    switch (defect) {
        case SwigluQ8Defect::quantize_g:
            swiglu_q8::launch_swiglu_q8_0<Defect::quantize_g>(g, u, out, xq, n, f, stream);
            break;
        case SwigluQ8Defect::skip_last:
            swiglu_q8::launch_swiglu_q8_0<Defect::skip_last>(g, u, out, xq, n, f, stream);
            break;
    }
}

}  // namespace bitgate::cuda
