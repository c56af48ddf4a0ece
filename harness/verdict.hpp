// What a check concludes, per output and per case.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bitgate {

// Ordered from "nothing wrong" to "most fundamental": a case reports its worst.
enum class Verdict {
    ok,
    skipped,          // not run here (no launcher, host-only build, ...); never a failure
    no_golden,        // a seed beyond the catalog's own (--seeds) with no golden line: every other
                      // check ran; never a failure unless --require-golden
    stale_on_reuse,   // run C (same addresses, new inputs) is wrong where run D (fresh addresses) is right
    value_mismatch,   // bytes differ from the host model
    claim_mismatch,   // variants that claim identity differ
    golden_missing,   // no golden line for the case
    golden_mismatch,  // the host model's digest differs from the golden line
    unwritten,        // bytes the kernel (or model) never wrote: runs A and B disagree
    input_modified,   // an input changed
    out_of_bounds,    // a guard zone changed
    launch_error,     // the launch or the synchronisation failed
};

const char* verdict_name(Verdict v);
bool verdict_from_name(const std::string& s, Verdict& out);

struct Difference {
    std::string tensor;
    Verdict verdict = Verdict::ok;
    size_t bytes = 0;                 // differing bytes
    size_t elements = 0;              // differing elements (Q8_0: blocks)
    std::vector<std::string> first;   // the first differences, decoded
};

struct Result {
    std::string family, variant, where, catalog, origin;  // where: host | device; origin: file:line
    std::string case_id;                                   // "family/variant dims seed= profile="
    std::string shape, profile;                            // "k=896", "uniform" (empty: not a case)
    uint64_t seed = 0;
    Verdict verdict = Verdict::ok;
    std::vector<Difference> diffs;
    std::string note;
    bool mutant = false;
    std::string expect;  // mutants: the verdict they must produce
    double ms = 0;
    int64_t order = -1;  // its place in the unsharded run (sharded reports merge back into it); -1: none

    // A mutant passes when caught with its class; anything else when ok or skipped.
    bool passed() const;
    // Whether `v` is one of the classes a mutant expects ("unwritten", or "unwritten|value_mismatch").
    bool expects(Verdict v) const;
    // A mutant naming several classes is racy: which class it shows depends on timing.
    bool racy() const;
};

// Classes a race can produce in any run, whichever run lost it: each is a comparison of values
// (A with B, A with the model, C with the model while D is right). A racy mutant's case showing
// one of them is a consequence of its race, never a wrong class (docs/contract.md "Precedence").
bool race_consequence(Verdict v);

}  // namespace bitgate
