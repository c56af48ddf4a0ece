// Defective swiglu variants the engine must catch: device mutants of the fused kernel, held to
// its goldens with the correct model.
#include "bitgate/spec.hpp"
#include "swiglu.hpp"

namespace {

using namespace bitgate;

void correct_model(const Shape& s, const HostIo& io) {
    ref::swiglu_quant_f32_t(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"], s["f"],
                            io.output<uint8_t>(1), io.output<uint32_t>(2));
}

VariantSpec device_mutant(const char* name, const char* expect, const char* what) {
    return VariantSpec{.name = name, .summary = what, .model = correct_model, .mutant = true, .expect = expect,
                       .golden_as = "fused"};
}

BITGATE_VARIANT("swiglu", device_mutant("m_tail_unwritten", "unwritten",
                                        "fused kernel leaves the padded tokens' plane bytes unwritten"));
BITGATE_VARIANT("swiglu", device_mutant("m_no_xor", "value_mismatch", "fused kernel drops the swizzle's xor"));
BITGATE_VARIANT("swiglu", device_mutant("m_expf", "value_mismatch",
                                        "SiLU with __expf (MUFU ex2.approx) instead of exp_det"));

}  // namespace
