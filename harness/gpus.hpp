// How many GPUs this process sees, for spreading a run over them (one worker process per GPU).
// Implemented in harness/cuda/gpus.cpp and harness/nocuda/gpus.cpp.
#pragma once
#include <string>
#include <vector>

namespace bitgate {

struct VisibleGpus {
    int count = 0;
    std::vector<std::string> names;  // one per device, as gpu_name() spells it
    std::string why_none;            // when count is 0: why (no CUDA in this build, no device, ...)
    bool built_with_cuda = true;
};
VisibleGpus visible_gpus();

}  // namespace bitgate
