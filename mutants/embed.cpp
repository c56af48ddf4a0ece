// Defective embed variants the engine must catch: a kernel that reads the row after the one the
// id names, held to the q8_0 variant's model and golden lines.
#include <string>

#include "bitgate/spec.hpp"
#include "embed.cuh"

namespace {

using namespace bitgate;

BITGATE_VARIANT("embed", kernel_mutant("q8_0", "m_wrong_row", "value_mismatch",
                                       "Q8_0 kernel reads row (id + 1) % vocab instead of row id",
                                       BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                                           cuda::mutants::embed_q8_0_wrong_row(
                                               io.input<BlockQ8_0>("table"), s["vocab"], s["d"], io.input<int32_t>("ids"),
                                               s["n"], io.output<float>("out"), static_cast<cudaStream_t>(io.stream));
                                           return 1;
                                       }),
                                       [](const Shape& s) -> std::string { return s["type"] == 2 ? "" : "needs type=2"; }));

}  // namespace
