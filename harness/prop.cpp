// prop's generators, and prop --mutants: each mutant's property is "it agrees with the variant it
// imitates", and the search must falsify it within --count cases, then shrink it as it would a
// real failure, and the shrunk case must show the class the mutant expects. So the search and the
// shrinking are shown to find a planted defect from generated shapes alone, not from catalog
// lines written for it.
#include <algorithm>
#include <cstdio>

#include "catalog.hpp"
#include "check.hpp"
#include "errors.hpp"
#include "progress.hpp"
#include "prop.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace bitgate {

rc::Gen<int64_t> dim_gen(const Dim& d) {
    const int64_t m = d.multiple > 0 ? d.multiple : 1;
    const int64_t lo = (d.lo + m - 1) / m, hi = d.hi / m;
    auto uniform = rc::gen::map(rc::gen::inRange<int64_t>(lo, hi + 1), [m](int64_t x) { return x * m; });
    if (d.edges.empty()) return uniform;
    return rc::gen::weightedOneOf<int64_t>({{3, uniform}, {1, rc::gen::elementOf(d.edges)}});
}

Shape draw_shape(const FamilySpec& f) {
    Shape s;
    s.family = f.name;
    for (const Dim& d : f.dims) {
        int64_t v = *dim_gen(d).as(d.name);
        if (!d.at_least.empty()) v = std::max(v, s[d.at_least]);
        s.names.push_back(d.name);
        s.values.push_back(v);
    }
    return s;
}

namespace {

// RapidCheck's own listener prints a replay line for every failed property at exit; a mutant's
// property is meant to fail, and its replay is the catalog line this verb prints.
struct Quiet : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

Hunt hunt_mutant(const FamilySpec& f, const VariantSpec& m, const HuntOptions& o) {
    const std::string name = f.name + "/" + m.name;
    Hunt hunt;
    if (!m.model && !o.device) return hunt;  // counted in the summary line
    const VariantSpec& imitated = variant(f, m.golden_as);
    CheckSession session(CheckOptions{.device = o.device, .golden = false, .mutants = true, .case_timeout_s = o.case_timeout});
    Progress progress("cases");
    const auto property = [&] {
        const Shape s = draw_shape(f);
        RC_PRE(shape_problem(f, &m, s).empty() && shape_problem(f, &imitated, s).empty());
        const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1u << 20).as("seed");
        const std::string profile = *rc::gen::elementOf(f.profiles).as("profile");
        const CaseGroup g{.family = &f, .catalog = "prop", .where = "prop", .shape = s, .seed = seed, .profile = profile,
                          .variants = {&m}};
        ++hunt.cases;
        if (!hunt.first) progress(hunt.cases - 1, o.count, name);
        const auto rs = session.check_group(g, nullptr);
        if (!hunt.first || o.verbose) progress.clear();
        if (o.verbose)
            for (const Result& r : rs) print_result(stdout, r);
        // A mutant's result "passes" when it is caught; here any difference at all is a find. Once
        // found, shrinking keeps to the class first seen: a smaller case failing in another way
        // shows another consequence, not a smaller counterexample of the same one.
        std::vector<Result> found;
        for (const Result& r : rs) {
            const bool differs = r.verdict != Verdict::ok && r.verdict != Verdict::skipped;
            if (differs && (!hunt.first || r.verdict == hunt.first_class)) found.push_back(r);
        }
        if (found.empty()) return;
        if (!hunt.first) {
            hunt.first = hunt.cases;
            hunt.first_class = found.front().verdict;
        }
        // Shrinking runs the property again on smaller cases; the last failing one is the shrunk case.
        hunt.catalog_line = catalog_line(f, s, seed, profile);
        hunt.shrunk = found;
        RC_FAIL(hunt.catalog_line + ": " + verdict_name(found.front().verdict));
    };
    // Explicit parameters rather than RC_PARAMS, which RapidCheck reads once a process.
    rc::detail::TestParams params;
    params.seed = o.seed;
    params.maxSuccess = int(o.count);
    params.maxSize = 100;
    params.maxDiscardRatio = 50;
    rc::detail::TestMetadata meta;
    meta.id = meta.description = name + " over generated shapes";
    Quiet quiet;
    const rc::detail::TestResult result = rc::detail::checkTestable(property, meta, params, quiet);
    progress.clear();
    if (!hunt.first) {
        hunt.outcome = HuntOutcome::missed;
        // Giving up (too few generated shapes valid for the mutant) finds nothing either.
        if (result.template is<rc::detail::GaveUpResult>())
            std::printf("prop --mutants %s: MISSED: the search gave up after %zu cases, too few generated shapes being "
                        "valid for it (must be caught as %s)\n", name.c_str(), hunt.cases, m.expect.c_str());
        else
            std::printf("prop --mutants %s: MISSED: agreed with %s on all %zu generated cases (must be caught as %s)\n",
                        name.c_str(), imitated.name.c_str(), hunt.cases, m.expect.c_str());
        return hunt;
    }
    bool right = true;
    for (const Result& r : hunt.shrunk) right &= r.expects(r.verdict) || (r.racy() && race_consequence(r.verdict));
    hunt.outcome = right ? HuntOutcome::caught : HuntOutcome::wrong_class;
    std::printf("prop --mutants %s: %s as %s on generated case %zu; shrunk (%zu cases run in all) to:\n", name.c_str(),
                right ? "CAUGHT" : "WRONG CLASS", verdict_name(hunt.shrunk.front().verdict), hunt.first, hunt.cases);
    for (const Result& r : hunt.shrunk) print_result(stdout, r);
    std::printf("  catalog line: %s\n", hunt.catalog_line.c_str());
    if (!right) std::printf("  (must be caught as %s)\n", m.expect.c_str());
    return hunt;
}

int prop_mutants(const std::vector<const FamilySpec*>& fams, const std::vector<std::string>& variants, const HuntOptions& o) {
    size_t n[4] = {0, 0, 0, 0};
    for (const FamilySpec* f : fams)
        for (const VariantSpec& v : f->variants)
            if (v.mutant && selected(variants, v.name)) ++n[size_t(hunt_mutant(*f, v, o).outcome)];
    const size_t caught = n[size_t(HuntOutcome::caught)], missed = n[size_t(HuntOutcome::missed)],
                 wrong = n[size_t(HuntOutcome::wrong_class)], searched = caught + missed + wrong;
    std::printf("bitgate prop --mutants: %zu mutants searched: %zu caught, %zu missed, %zu with another class", searched,
                caught, missed, wrong);
    if (n[size_t(HuntOutcome::not_searched)])
        std::printf(" (%zu kernel mutants not searched: no device)", n[size_t(HuntOutcome::not_searched)]);
    std::printf("\n");
    // A selection with nothing to search shows nothing: a failure, as an empty check is.
    if (searched == 0) std::printf("bitgate prop --mutants: no mutant searched: FAILED\n");
    return searched == 0 || missed || wrong ? exit_failed : exit_ok;
}

}  // namespace bitgate
