// The attention family's order constants, shared by the host model and the kernels
// (docs/attention.md gives the whole order).
//
// The keys a query attends are cut into splits of kAttnSplit consecutive positions, counted from
// position 0: split c holds keys [c * kAttnSplit, (c + 1) * kAttnSplit), the last one cut at the
// query's own position. The split is a pure function of the key position: never of the device,
// the grid or the number of queries, so the prefill and decode kernels share one order.
#pragma once
#include <cmath>
#include <cstdint>

namespace bitgate {

inline constexpr int64_t kAttnSplit = 128;

// The splits' states are folded in two levels: group g holds splits [g * kAttnFoldGroup,
// (g + 1) * kAttnFoldGroup), each group is folded in position order, then the groups' states in
// group order. A function of the split index alone, like the split; a query of up to
// kAttnFoldGroup splits (4,096 keys) has one group, and its fold is the plain one.
inline constexpr int64_t kAttnFoldGroup = 32;

// Splits of a query that attends n_keys keys (positions 0 .. n_keys - 1).
inline constexpr int64_t attn_splits(int64_t n_keys) { return (n_keys + kAttnSplit - 1) / kAttnSplit; }

// The softmax scale, 1 / sqrt(head_dim) as two IEEE operations (correctly rounded square root,
// then division). Computed on the host and passed to the kernels.
inline float attention_scale(int64_t head_dim) { return 1.0f / std::sqrt(float(head_dim)); }

}  // namespace bitgate
