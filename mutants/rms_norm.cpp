// Defective rms_norm variants the engine must catch. All are device mutants held to the fused
// variant: its model, its golden lines.
#include "bitgate/spec.hpp"
#include "rms_norm.cuh"

namespace {

using namespace bitgate;
using cuda::mutants::RmsNormDefect;

DeviceLauncher defective([[maybe_unused]] RmsNormDefect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        cuda::mutants::rms_norm_quant_f32_t_defective(defect, io.input<float>("x"), io.input<float>("w"),
                                                      io.output<float>("y"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                                      io.output<uint32_t>("sda"), static_cast<cudaStream_t>(io.stream));
        return 1;
    });
}

BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_rsqrtf", "value_mismatch",
                                          "scale from rsqrtf (MUFU approximation) instead of 1 / sqrtf",
                                          defective(RmsNormDefect::rsqrtf)));
BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_tail_unwritten", "unwritten",
                                          "fused kernel leaves the padded tokens' plane bytes unwritten",
                                          defective(RmsNormDefect::tail_unwritten)));
// The block quantizes row+8, which the next block normalizes and writes: read back from global
// memory with no ordering between blocks, it sees the other block's y or the poison under it.
// Both are wrong bytes. Which one it reads is a race: the poison differs between runs A and B
// (unwritten), the other block's y does not (value_mismatch); the H200 showed both.
BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_other_block_row", "unwritten|value_mismatch",
                                          "quantizes y of row+8, written by another block, read back from global",
                                          defective(RmsNormDefect::other_block_row)));

}  // namespace
