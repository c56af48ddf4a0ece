// Defective rms_norm variants the engine must catch. All are device mutants held to the fused
// variant's goldens with the correct model.
#include "bitgate/spec.hpp"
#include "rms_norm.hpp"

namespace {

using namespace bitgate;

void correct_model(const Shape& s, const HostIo& io) {
    ref::rms_norm_quant_f32_t(io.input<float>(0), io.input<float>(1), io.output<float>(0), s["n"], s["d"],
                              io.output<uint8_t>(1), io.output<uint32_t>(2));
}

VariantSpec device_mutant(const char* name, const char* expect, const char* what) {
    return VariantSpec{.name = name, .summary = what, .model = correct_model, .mutant = true, .expect = expect,
                       .golden_as = "fused"};
}

BITGATE_VARIANT("rms_norm", device_mutant("m_rsqrtf", "value_mismatch",
                                          "scale from rsqrtf (MUFU approximation) instead of 1 / sqrtf"));
BITGATE_VARIANT("rms_norm", device_mutant("m_tail_unwritten", "unwritten",
                                          "fused kernel leaves the padded tokens' plane bytes unwritten"));
// The block quantizes row+8, which the next block normalizes and writes: read back from global
// memory with no ordering between blocks, it sees the other block's y or the poison under it.
// Both are wrong bytes. Which one it reads is a race: the poison differs between runs A and B
// (unwritten), the other block's y does not (value_mismatch); the H200 showed both.
BITGATE_VARIANT("rms_norm", device_mutant("m_other_block_row", "unwritten|value_mismatch",
                                          "quantizes y of row+8, written by another block, read back from global"));

}  // namespace
