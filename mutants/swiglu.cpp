// Defective swiglu variants the engine must catch: device mutants of the fused kernel, held to
// its model and golden lines.
#include "bitgate/spec.hpp"
#include "swiglu.cuh"

namespace {

using namespace bitgate;
using cuda::mutants::SwigluDefect;

DeviceLauncher defective([[maybe_unused]] SwigluDefect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        cuda::mutants::swiglu_quant_f32_t_defective(defect, io.input<float>("g"), io.input<float>("u"),
                                                    io.output<float>("out"), s["n"], s["f"], io.output<uint8_t>("qs"),
                                                    io.output<uint32_t>("sda"), static_cast<cudaStream_t>(io.stream));
        return 1;
    });
}

BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_tail_unwritten", "unwritten",
                                        "fused kernel leaves the padded tokens' plane bytes unwritten",
                                        defective(SwigluDefect::tail_unwritten)));
BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_no_xor", "value_mismatch", "fused kernel drops the swizzle's xor",
                                        defective(SwigluDefect::no_xor)));
BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_expf", "value_mismatch",
                                        "SiLU with __expf (MUFU ex2.approx) instead of exp_det",
                                        defective(SwigluDefect::expf)));

}  // namespace
