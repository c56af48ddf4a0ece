// Reports: one console line per case with its failures decoded below it, a summary, and the
// same results as JSON and JUnit XML for tools and CI.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "progress.hpp"  // the verbs that report show progress with it
#include "verdict.hpp"

namespace bitgate {

struct Tally {
    size_t total = 0, ok = 0, failed = 0, skipped = 0, no_golden = 0, host = 0, device = 0;
};

Tally tally(const std::vector<Result>& rs);
// "OK   host   quantize_q8_0/v1 k=896 seed=1 profile=uniform", and for a failure the verdict, the
// differing bytes per output and the first differences decoded.
void print_result(std::FILE* out, const Result& r);
// Mutants are judged over all their cases: caught with one of their classes at least once, never
// with another class. A racy mutant (several classes) may also show a race consequence
// (race_consequence) in some cases; those count apart and never fail it (docs/contract.md).
struct MutantTally {
    std::string name, expect;
    bool racy = false;
    size_t caught = 0, missed = 0, wrong = 0, skipped = 0, consequence = 0;
    bool passed() const { return caught > 0 && wrong == 0; }
};
std::vector<MutantTally> mutant_summary(const std::vector<Result>& rs);
// Prints one line per mutant; false when one escaped (ran somewhere and was never caught right).
bool print_mutant_summary(std::FILE* out, const std::vector<Result>& rs);

// What a report says about the run itself.
struct RunInfo {
    std::string verb;
    std::vector<std::string> argv;
    std::string device = "none";
    std::string shard;  // "I/N", empty when unsharded
    double seconds = 0;
};

void print_summary(std::FILE* out, const char* verb, const std::vector<Result>& rs, double seconds,
                   const std::string& shard = "");
// After a failed run: every failure again, one line each, as gtest recaps them.
void print_recap(std::FILE* out, const std::vector<Result>& rs);
// A report file that cannot be opened for writing, or that is one of the run's `inputs`, is bad
// input, found before the run starts.
void check_writable(const std::string& path, const char* what, const std::vector<std::string>& inputs = {});
// --json and --junit naming one file (the second would replace the first): bad input.
void check_distinct_reports(const std::string& json, const std::string& junit);
void write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& rs);
void write_junit(const std::string& path, const RunInfo& info, const std::vector<Result>& rs);

inline constexpr int kJsonFormat = 2;  // bumped when a field changes meaning or goes away
const char* bitgate_version();
const char* build_commit();  // the commit the binary was built from (configure time)

}  // namespace bitgate
