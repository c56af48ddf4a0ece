// Defective embed variants the engine must catch: a kernel that reads the row after the one the
// id names, held to the q8_0 variant's model and golden lines.
#include <string>

#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("embed", kernel_mutant("q8_0", "m_wrong_row", "value_mismatch",
                                       "Q8_0 kernel reads row (id + 1) % vocab instead of row id",
                                       [](const Shape& s) -> std::string { return s["type"] == 2 ? "" : "needs type=2"; }));

}  // namespace
