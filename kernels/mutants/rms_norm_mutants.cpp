// Defective rms_norm variants the engine must catch. All are device mutants held to the fused
// variant: its model, its golden lines.
#include "bitgate/spec.hpp"
#include "rms_norm.hpp"

namespace {

using namespace bitgate;

BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_rsqrtf", "value_mismatch",
                                          "scale from rsqrtf (MUFU approximation) instead of 1 / sqrtf"));
BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_tail_unwritten", "unwritten",
                                          "fused kernel leaves the padded tokens' plane bytes unwritten"));
// The block quantizes row+8, which the next block normalizes and writes: read back from global
// memory with no ordering between blocks, it sees the other block's y or the poison under it.
// Both are wrong bytes. Which one it reads is a race: the poison differs between runs A and B
// (unwritten), the other block's y does not (value_mismatch); the H200 showed both.
BITGATE_VARIANT("rms_norm", kernel_mutant("fused", "m_other_block_row", "unwritten|value_mismatch",
                                          "quantizes y of row+8, written by another block, read back from global"));

}  // namespace
