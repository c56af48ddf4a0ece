// Defective add variants the engine must catch: a kernel that never adds the n % 4 tail values.
#include "add.cuh"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("add", kernel_mutant("v1", "m_skip_tail", "unwritten",
                                     "kernel without the scalar tail: the last n % 4 values are never written",
                                     BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                                         return cuda::mutants::add_f32_no_tail(
                                             io.input<float>("a"), io.input<float>("b"), io.output<float>("y"),
                                             s["n"] * s["d"], static_cast<cudaStream_t>(io.stream));
                                     })));

}  // namespace
