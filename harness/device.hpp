// The device side of the engine: whether a GPU is usable, and guarded device buffers.
// Implemented in harness/cuda/ where CUDA is built and in harness/nocuda/ otherwise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace bitgate {

// "" when a CUDA device is usable; otherwise why not ("built without CUDA", "no CUDA device").
std::string gpu_missing();

}  // namespace bitgate
