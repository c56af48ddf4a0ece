// Defective swiglu variants the engine must catch: device mutants of the fused kernel, held to
// its model and golden lines.
#include "bitgate/spec.hpp"
#include "swiglu.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_tail_unwritten", "unwritten",
                                        "fused kernel leaves the padded tokens' plane bytes unwritten"));
BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_no_xor", "value_mismatch", "fused kernel drops the swizzle's xor"));
BITGATE_VARIANT("swiglu", kernel_mutant("fused", "m_expf", "value_mismatch",
                                        "SiLU with __expf (MUFU ex2.approx) instead of exp_det"));

}  // namespace
