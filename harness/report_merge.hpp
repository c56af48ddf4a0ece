// Reading JSON reports back, and merging the reports of shards (of one host's workers, or of
// several hosts) into the report of the whole run: `bitgate report merge`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "verdict.hpp"

namespace bitgate {

struct Report {
    std::string path;  // where it was read from, for messages
    std::string bitgate, build_commit, verb, device;
    std::vector<std::string> argv;
    int shard_index = 0, shard_count = 1;
    double seconds = 0;
    std::vector<Result> results;
};

// A JSON report as write_json writes it (format 2). Anything else is BadInput, one line naming
// `path` and what is wrong ("r.json: results[3].verdict: unknown verdict 'okay'").
Report parse_report(std::string_view text, const std::string& path);
Report read_report(const std::string& path);

// The arguments that decide what a run selects: argv[0] reduced to its file name and without the
// options that only say how the run is split or where it reports (--shard, --json, --junit,
// --gpus, --workers, --quiet, --failures-only, --allow-empty). Shards of one run agree on it.
std::vector<std::string> selection_argv(const std::vector<std::string>& argv);

// Merges reports that together are shard `index` of `count` of one run (0 of 1: the whole run):
// the same bitgate, build commit, verb and selection; shards of one N, each exactly once, all
// inside the wanted shard. The results come out in the order the unsharded run makes them.
// Anything else is BadInput naming the file.
Report merge_reports(const std::vector<Report>& parts, int index = 0, int count = 1);

}  // namespace bitgate
