// Defective swiglu_q8_0 variants the engine must catch: device mutants held to the fused variant
// (its model, its golden lines).
#include "bitgate/spec.hpp"
#include "swiglu_q8_0.cuh"

namespace {

using namespace bitgate;
using cuda::mutants::SwigluQ8Defect;

DeviceLauncher defective([[maybe_unused]] SwigluQ8Defect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        cuda::mutants::swiglu_q8_0_defective(defect, io.input<float>("g"), io.input<float>("u"),
                                             io.output<float>("out"), io.output<BlockQ8_0>("xq"), s["n"], s["f"],
                                             static_cast<cudaStream_t>(io.stream));
        return 1;
    });
}

BITGATE_VARIANT("swiglu_q8_0", kernel_mutant("fused", "m_quantize_g", "value_mismatch",
                                             "quantizes the gate input instead of the SwiGLU value",
                                             defective(SwigluQ8Defect::quantize_g)));
BITGATE_VARIANT("swiglu_q8_0", kernel_mutant("fused", "m_skip_last", "unwritten",
                                             "leaves the last Q8_0 block unwritten", defective(SwigluQ8Defect::skip_last)));

}  // namespace
