#include "bench.hpp"

#include "device.hpp"
#include "errors.hpp"

namespace bitgate {

double measure_read_ceiling() { throw NoGpu(gpu_missing()); }
std::vector<BenchRow> run_bench(const BenchOptions&, double) { throw NoGpu(gpu_missing()); }

}  // namespace bitgate
