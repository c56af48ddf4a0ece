// The two plain copies the family specs' preparations need: an output seeded from an input
// before an in-place launch (the forward's in-place call), and a small index tensor (token ids,
// positions) read back to the host, so that the spec checks it before a launch and an index out
// of range is a one-line bad-input error, never a read outside a table. Plain C++ declarations:
// the host-compiled specs name them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bitgate/stream.hpp"

namespace bitgate::cuda {

// bytes from src to dst, both on the device, in stream order.
void copy_on_device(void* dst, const void* src, size_t bytes, cudaStream_t stream);

// n int32 values from the device, after the stream's earlier work (it synchronizes the stream).
std::vector<int32_t> read_back_i32(const int32_t* dev, int64_t n, cudaStream_t stream);

}  // namespace bitgate::cuda
