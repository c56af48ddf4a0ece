// The defective proj_q8_0_add launcher: the real v2 kernel with the add_early defect.
#include "proj_q8_0_add.cuh"

#include "../kernels/proj_q8_0_impl.cuh"

namespace bitgate::cuda::mutants {

namespace {
struct AddEarly : proj_q8_0_detail::Sound {
    static constexpr bool add_early = true;
};
}  // namespace

int proj_q8_0_add_early(const BlockQ8_0* w, const BlockQ8_0* xq, const float* add, float* y, int64_t n, int64_t k,
                        cudaStream_t stream) {
    const int64_t bpr = k / QK8_0;
    proj_q8_0_detail::launch_v2<AddEarly>(proj_q8_0_detail::Mats{{w}, {y}, 1, {add}}, xq, n, bpr,
                                          proj_q8_0_v2_width(bpr), stream);
    return 1;
}

}  // namespace bitgate::cuda::mutants
