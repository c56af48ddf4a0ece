// Defective bias variants the engine must catch: a kernel that adds the next column's bias.
#include "bias.cuh"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("bias", kernel_mutant("v1", "m_next_col", "value_mismatch", "kernel adds bias[(c + 1) % d] to column c",
                                      BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                                          cuda::mutants::bias_f32_next_col(io.input<float>("x"), io.input<float>("bias"),
                                                                           io.output<float>("y"), s["n"], s["d"],
                                                                           static_cast<cudaStream_t>(io.stream));
                                          return 1;
                                      })));

}  // namespace
