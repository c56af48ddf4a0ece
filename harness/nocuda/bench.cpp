#include "bench.hpp"

#include "device.hpp"
#include "errors.hpp"

namespace bitgate {

double measure_read_ceiling() { throw NoGpu(gpu_missing()); }
size_t device_l2_bytes() { throw NoGpu(gpu_missing()); }
std::vector<BenchRow> run_bench(const std::vector<BenchItem>&, const BenchOptions&, double) { throw NoGpu(gpu_missing()); }
std::string back_to_back_capture_problem(const DeviceLauncher&, const Shape&, const std::vector<DeviceIo>&, int, int) {
    throw NoGpu(gpu_missing());
}

}  // namespace bitgate
