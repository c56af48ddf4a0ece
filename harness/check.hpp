// `bitgate check`: every case of every selected family, on the host models (goldens, coverage,
// claims) and, where a GPU is used, on the device (three guarded runs and cross-variant claims).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "golden.hpp"
#include "host_run.hpp"
#include "verdict.hpp"

namespace bitgate {

struct CheckOptions {
    std::vector<std::string> families;  // empty: all
    std::vector<std::string> variants;  // empty: all
    std::vector<std::string> catalogs;  // empty: all, "regressions" included
    std::vector<uint64_t> seeds;        // empty: each line's own
    bool device = false;                // run device diffs
    bool golden = true;                 // hold host digests to golden files
    bool mutants = false;               // run the mutant variants (only) and expect their classes
    int shard_index = 0, shard_count = 1;
    std::string root;                   // holds shapes/ and golden/
};

using ResultSink = std::function<void(const Result&)>;

// The case groups a check runs, in order: regressions first, then each family's catalogs.
std::vector<CaseGroup> plan(const CheckOptions& o);

// Runs one case group. `golden` may be null (property search: no golden lines exist).
std::vector<Result> check_group(const CaseGroup& g, const CheckOptions& o, const GoldenFile* golden);

// Runs the plan, handing each result to `sink` as it is made; progress goes to `progress`
// (called with done, total, current id) when given.
std::vector<Result> run_check(const CheckOptions& o, const ResultSink& sink,
                              const std::function<void(size_t, size_t, const std::string&)>& progress = {});

// The digests of one case's host model (for golden regen).
Digests model_digests(const FamilySpec& f, const VariantSpec& v, const Shape& s, uint64_t seed, const std::string& profile);

std::string shapes_path(const std::string& root, const std::string& family);
std::string golden_path(const std::string& root, const std::string& family);
std::string default_root();

}  // namespace bitgate
