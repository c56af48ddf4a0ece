// Defective bias variants the engine must catch: a kernel that adds the next column's bias.
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("bias", kernel_mutant("v1", "m_next_col", "value_mismatch",
                                      "kernel adds bias[(c + 1) % d] to column c"));

}  // namespace
