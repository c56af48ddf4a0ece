// `bitgate check`: every case of every selected family, on the host models (goldens, coverage,
// claims) and, where a GPU is used, on the device (three guarded runs and cross-variant claims).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "golden.hpp"
#include "host_run.hpp"
#include "verdict.hpp"
#include "watchdog.hpp"

namespace bitgate {

struct CheckOptions {
    std::vector<std::string> families;  // empty: all
    std::vector<std::string> variants;  // empty: all
    std::vector<std::string> catalogs;  // empty: all, "regressions" included
    std::vector<uint64_t> seeds;        // empty: each line's own
    bool require_golden = false;        // a seed from --seeds without a golden line fails (golden_missing)
    std::vector<std::string> filter;    // case-id regexes; "-REGEX" excludes (as --gtest_filter)
    bool device = false;                // run device diffs
    bool golden = true;                 // hold host digests to golden files
    bool mutants = false;               // run the mutant variants (only) and expect their classes
    int shard_index = 0, shard_count = 1;
    std::string root;                   // holds shapes/ and golden/
    double case_timeout_s = 300;        // a device case still running after this stops the run (exit_hang); 0: never
};

using ResultSink = std::function<void(const Result&)>;
using ProgressFn = std::function<void(size_t, size_t, const std::string&)>;

// "quantize_q8_0/v1 k=896 seed=1 profile=uniform": the one spelling of a case in every verb.
std::string case_id(const FamilySpec& f, const std::string& variant, const Shape& s, uint64_t seed, const std::string& profile);
// Whether a name is among those a selection option names (none named: every name is).
bool selected(const std::vector<std::string>& names, const std::string& name);
// Whether a case id passes the --filter patterns (none: every case).
bool filter_admits(const std::vector<std::string>& patterns, const std::string& id);
// Throws BadInput naming the known ones for a family, variant or catalog that does not exist in
// the selection (a name that selects nothing is a mistake, not an empty run).
void validate_selection(const CheckOptions& o);

// The case groups a check runs, in order: regressions first, then each family's catalogs.
std::vector<CaseGroup> plan(const CheckOptions& o);

// One run of checks: owns what is remembered across cases (which shapes' coverage a model has
// proven, the first device output of each claim) so that nothing outlives it.
class CheckSession {
public:
    explicit CheckSession(CheckOptions o) : o_(std::move(o)) {}
    const CheckOptions& options() const { return o_; }

    // Runs one case group. `golden` may be null (property search: no golden lines exist).
    std::vector<Result> check_group(const CaseGroup& g, const GoldenFile* golden);
    // Runs the plan (this shard of it), handing each result to `sink` as it is made.
    std::vector<Result> run(const ResultSink& sink, const ProgressFn& progress = {});

    // golden check/regen of one case: the model in guarded buffers (its own verdict kept) and its
    // digests against the file's line.
    struct GoldenCase {
        Result result;
        Digests digests;
    };
    GoldenCase golden_case(const CaseGroup& g, const VariantSpec& v, const GoldenFile& file);

private:
    ModelRun model(const CaseGroup& g, const VariantSpec& v, const std::vector<Bytes>& in);
    void hold_to_golden(Result& h, const CaseGroup& g, const VariantSpec& v, const Digests& d, const GoldenFile& golden) const;

    CheckOptions o_;
    Watchdog watchdog_{o_.case_timeout_s};  // around each device case
    std::set<std::string> covered_;  // variant, shape and profile whose coverage the model has shown
    std::map<std::string, std::pair<std::string, Digests>> first_device_;  // case+claim -> variant, digests
};

// Shorthands with a session of their own.
std::vector<Result> check_group(const CaseGroup& g, const CheckOptions& o, const GoldenFile* golden);
std::vector<Result> run_check(const CheckOptions& o, const ResultSink& sink, const ProgressFn& progress = {});
// The groups of shard I of N: every N-th group, from the I-th.
bool in_shard(size_t group_index, const CheckOptions& o);

// The digests of one case's host model (for golden regen).
Digests model_digests(const FamilySpec& f, const VariantSpec& v, const Shape& s, uint64_t seed, const std::string& profile);

std::string shapes_path(const std::string& root, const std::string& family);
std::string golden_path(const std::string& root, const std::string& family);
std::string default_root();
// What a check may read under its root: every family's catalog and golden file. A report must not
// be written over one of them.
std::vector<std::string> check_inputs(const CheckOptions& o);

}  // namespace bitgate
