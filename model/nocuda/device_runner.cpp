// The device runner where bitgate is built without CUDA: it reports that a GPU is required.
#include "device.hpp"
#include "errors.hpp"
#include "forward.hpp"

namespace bitgate::model {

std::unique_ptr<Runner> make_device_runner(const Model&, const std::string&, int64_t, const DeviceOptions&) {
    throw NoGpu(gpu_missing());
}

}  // namespace bitgate::model

namespace bitgate::model {

BenchStats device_bench(const Model&, const Graph&, int, const DeviceOptions&) { throw NoGpu(gpu_missing()); }

}  // namespace bitgate::model
