// prop's generators, and its search for mutants (`prop --mutants`), shared by the verb and tests.
#pragma once
#include <rapidcheck.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bitgate/spec.hpp"
#include "verdict.hpp"

namespace bitgate {

// A dimension drawn uniformly over its range (in its multiple), or one of its edges a quarter of
// the time.
rc::Gen<int64_t> dim_gen(const Dim& d);
// Inside a property: every dimension of the family drawn and named, so a failure prints them.
Shape draw_shape(const FamilySpec& f);

struct HuntOptions {
    uint64_t seed = 1;
    size_t count = 100;
    bool device = false;
    bool verbose = false;
    double case_timeout = 300;
};

enum class HuntOutcome { caught, missed, wrong_class, not_searched };

struct Hunt {
    HuntOutcome outcome = HuntOutcome::not_searched;
    size_t cases = 0;          // cases run, shrinking's included
    size_t first = 0;          // the generated case that first found it (0: none did)
    Verdict first_class = Verdict::ok;  // the class it showed there, which shrinking keeps
    std::string catalog_line;  // the shrunk counterexample
    std::vector<Result> shrunk;
};

// Searches generated shapes for a case where mutant `m` differs from the variant it imitates (a
// kernel mutant's device run from that variant's model, a host mutant's model from its model),
// shrinks the first one found (keeping to the class it showed), and judges that class. Prints
// what it finds. A kernel mutant is not searched without `device` (outcome not_searched, nothing
// printed).
Hunt hunt_mutant(const FamilySpec& f, const VariantSpec& m, const HuntOptions& o);

// `prop --mutants` over the mutants of `fams` that `variants` selects (none named: all); prints one
// summary line. Exit 1 when one is missed or caught with another class, or when none was searched.
int prop_mutants(const std::vector<const FamilySpec*>& fams, const std::vector<std::string>& variants, const HuntOptions& o);

}  // namespace bitgate
