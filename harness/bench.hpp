// `bitgate bench`: device timings of every variant on the catalog lines marked `bench`.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "bench_plan.hpp"
#include "bitgate/spec.hpp"
#include "catalog.hpp"

namespace bitgate {

struct BenchOptions {
    std::vector<std::string> families, variants;
    std::string root, json;
    int min_iters = 20;
    double target_ms = 300;  // time spent per row, per timing
};

// One way of timing a call. Isolated: each call alone between two events, then a wait for the
// device, so the time holds the call's launch latency, its ramp-up and its drain. Back-to-back:
// many calls captured in one CUDA graph and replayed, the time of a replay divided by its calls,
// as calls follow one another in a decode step.
struct BenchTiming {
    bool available = false;
    std::string why;  // when not available: the reason, in words
    double median_us = 0, p10_us = 0, p90_us = 0;  // per call
    Figures fig;                                  // of median_us
    int samples = 0;                              // isolated: calls timed; back-to-back: replays timed
    int calls = 0;                                // back-to-back: calls per replay
};

struct BenchRow {
    std::string family, variant, shape;
    double bytes = 0, ops = 0;
    std::string ops_unit;
    int launches = 0;
    int prepare_launches = 0;  // untimed, once per buffer set (a hoisted quantization)
    int rotation = 0;          // copies of the buffers the calls take in turn
    size_t rotation_bytes = 0;
    BenchTiming isolated, back_to_back;
};

struct BenchDevice {
    std::string name;
    double read_ceiling_gbps = 0;
    size_t l2_bytes = 0;
};

// Measured device read bandwidth (GB/s): a large read-only pass, the ceiling GB/s is held to.
double measure_read_ceiling();
// The L2 size the rotation is sized from (cudaDevAttrL2CacheSize).
size_t device_l2_bytes();
// A catalog line marked `bench` and the variants a run times on it.
struct BenchItem {
    CatalogLine line;
    std::vector<const VariantSpec*> variants;
};
// The pairs a run times (harness/bench_select.cpp), chosen on the host before any device work:
// the selected families' lines marked `bench`, each with the selected real variants that have a
// kernel (in a host-only build, judged without that), that the line admits and that take its
// shape. BadInput naming what matched nothing: an unknown family or variant, a named family or
// variant with no pair, or no pair at all (a run that timed nothing would exit 0).
std::vector<BenchItem> bench_selection(const BenchOptions& o);
std::vector<BenchRow> run_bench(const std::vector<BenchItem>& items, const BenchOptions& o, double ceiling);
// The back-to-back timing's first step, on its own for its tests: captures `calls` calls of
// `launch` (call i on sets[i % sets.size()]) into a CUDA graph on a stream of its own, then
// discards the graph. "" when every call was captured and the graph holds calls x launches
// kernels; else why not (a wait for the device or a host copy inside the call, a launch on
// another stream, an exception).
std::string back_to_back_capture_problem(const DeviceLauncher& launch, const Shape& s, const std::vector<DeviceIo>& sets,
                                         int calls, int launches);

// The report: a table with both timings labelled, then one line per unavailable back-to-back
// figure with its reason; and the same as JSON.
std::string bench_table(const BenchDevice& d, const std::vector<BenchRow>& rows);
std::string bench_json(const BenchDevice& d, const std::vector<BenchRow>& rows);

}  // namespace bitgate
