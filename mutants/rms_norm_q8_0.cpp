// Defective rms_norm_q8_0 variants the engine must catch: device mutants held to the fused
// variant (its model, its golden lines).
#include "bitgate/spec.hpp"
#include "rms_norm_q8_0.cuh"

namespace {

using namespace bitgate;
using cuda::mutants::RmsNormQ8Defect;

DeviceLauncher defective([[maybe_unused]] RmsNormQ8Defect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        cuda::mutants::rms_norm_q8_0_defective(defect, io.input<float>("x"), io.input<float>("w"),
                                               io.output<float>("y"), io.output<BlockQ8_0>("xq"), s["n"], s["d"],
                                               static_cast<cudaStream_t>(io.stream));
        return 1;
    });
}

BITGATE_VARIANT("rms_norm_q8_0", kernel_mutant("fused", "m_quantize_x", "value_mismatch",
                                               "quantizes the input row instead of the normalized one",
                                               defective(RmsNormQ8Defect::quantize_x)));
BITGATE_VARIANT("rms_norm_q8_0", kernel_mutant("fused", "m_last_block", "unwritten",
                                               "leaves each row's last Q8_0 block unwritten",
                                               defective(RmsNormQ8Defect::last_block)));

}  // namespace
