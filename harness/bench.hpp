// `bitgate bench`: device timings of every variant on the catalog lines marked `bench`.
#pragma once
#include <string>
#include <vector>

namespace bitgate {

struct BenchOptions {
    std::vector<std::string> families, variants;
    std::string root, json;
    int min_iters = 20;
    double target_ms = 300;  // time spent per row
};

struct BenchRow {
    std::string family, variant, shape;
    double median_us = 0, p10_us = 0, p90_us = 0;
    double bytes = 0, gbps = 0, pct_ceiling = 0;
    double ops = 0, ops_rate = 0;  // ops per second
    std::string ops_unit;
    int launches = 0, iters = 0, rotation = 0;
    int prepare_launches = 0;  // untimed, once per buffer set (a hoisted quantization)
};

// Measured device read bandwidth (GB/s): a large read-only pass, the ceiling GB/s is held to.
double measure_read_ceiling();
std::vector<BenchRow> run_bench(const BenchOptions& o, double ceiling);

}  // namespace bitgate
