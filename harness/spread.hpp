// A verb run as workers: `check` and `golden check` with --gpus or --workers. The parent starts
// one worker per GPU (or per --workers), each running one shard of this invocation's shard with
// its own JSON report in a private directory, waits for all of them and merges their reports
// into one, in the order the run makes its cases unsharded.
#pragma once
#include <string>
#include <vector>

#include "verdict.hpp"
#include "workers.hpp"

namespace bitgate {

struct SpreadRun {
    std::vector<Result> results;  // merged, in the unsharded order (empty unless complete)
    int worst_rc = 0;             // the workers' worst exit code (128 + signal for a killed one)
    bool complete = false;        // every worker ended with 0 or 1 and wrote its report
    std::string device;           // what the workers ran on
};

// `argv`: this invocation (argv[0], the verb, its options). Workers get it without --gpus,
// --workers, --shard, --json, --junit and the output flags, plus their own --shard, --json,
// --allow-empty (a worker's share may be empty; the parent judges the whole) and --quiet. What
// happens is told on `out`: the workers started, and how each ended (the tail of its log when it
// ended other than with 0 or 1).
SpreadRun spread_run(const Spread& s, const std::vector<std::string>& argv, int shard_index, int shard_count);

}  // namespace bitgate
