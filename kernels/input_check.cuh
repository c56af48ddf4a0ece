// Device-side input validation for launchers whose inputs carry indices (token ids, positions):
// the index tensor is copied back and checked on the host before the launch, so an index out of
// range is a one-line bad-input error and never a read outside a table.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "errors.hpp"

namespace bitgate::cuda {

template <class Problem>
void check_i32_input(const char* what, const int32_t* dev, int64_t n, cudaStream_t stream, Problem problem) {
    std::vector<int32_t> host(size_t(n > 0 ? n : 0));
    if (n > 0) {
        cudaMemcpyAsync(host.data(), dev, size_t(n) * 4, cudaMemcpyDeviceToHost, stream);
        cudaStreamSynchronize(stream);
    }
    if (std::string why = problem(host.data(), n); !why.empty()) throw BadInput(std::string(what) + ": " + why);
}

}  // namespace bitgate::cuda
