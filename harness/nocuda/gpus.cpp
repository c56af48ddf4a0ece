#include "gpus.hpp"

#include "device.hpp"

namespace bitgate {

VisibleGpus visible_gpus() { return VisibleGpus{.why_none = gpu_missing(), .built_with_cuda = false}; }

}  // namespace bitgate
