#include "swiglu_q8_0.cuh"

#include "swiglu_q8_0_kernel.cuh"

namespace bitgate::cuda {

void swiglu_q8_0(const float* g, const float* u, float* out, BlockQ8_0* xq, int64_t n, int64_t f,
                 cudaStream_t stream) {
    swiglu_q8::launch_swiglu_q8_0<swiglu_q8::Defect::none>(g, u, out, xq, n, f, stream);
}

}  // namespace bitgate::cuda
