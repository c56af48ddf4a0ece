// The SM count every launcher reads for dispatch (grid sizes, tile choice). An override lets a
// run act as if the card had another count: no byte may depend on it, so the results must not
// change (the forward pass's device test runs with overrides).
#pragma once

namespace bitgate::cuda {

// The override when set (> 0), else the current device's multiprocessor count (at least 1).
int sm_count();
// 0 clears the override.
void set_sm_count_override(int sms);

}  // namespace bitgate::cuda
