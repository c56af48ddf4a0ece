// Defective add variants the engine must catch: a kernel that never adds the n % 4 tail values.
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("add", kernel_mutant("v1", "m_skip_tail", "unwritten",
                                     "kernel without the scalar tail: the last n % 4 values are never written"));

}  // namespace
