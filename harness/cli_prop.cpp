// Verb: prop. RapidCheck searches a family's shape space (its Dim ranges and edges, seeds and
// profiles); a failure is shrunk and printed as a catalog line for shapes/regressions.shapes.
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "catalog.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "prop.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "workers.hpp"

namespace bitgate {

std::string regen_command(const FamilySpec& f);

namespace {

struct PropOpts {
    std::vector<std::string> families, variants;
    size_t count = 100;
    uint64_t seed = 0;
    bool device = false, host_only = false, append = false, verbose = false, mutants = false;
    std::string root, gpus;
    int workers = -1;  // absent
    double case_timeout = 300;
};

// Whether --variant leaves this family a variant to search. Without --family, --variant may name
// variants of other families only (validate_selection refuses a named family with none).
bool searched(const FamilySpec& f, const PropOpts& p) {
    const auto real = real_variants(f);
    return std::any_of(real.begin(), real.end(), [&](const VariantSpec* v) { return selected(p.variants, v->name); });
}

int prop_family(const FamilySpec& f, const PropOpts& p, bool device, size_t& shapes, std::vector<Result>& failures) {
    const auto real = real_variants(f);
    // Say so and search nothing here, rather than report every shape as discarded.
    if (!searched(f, p)) {
        std::string names;
        for (const VariantSpec* v : real) names += (names.empty() ? "" : ", ") + v->name;
        std::printf("prop %s: no variant of it selected by --variant (its variants: %s): not searched\n", f.name.c_str(),
                    names.c_str());
        return exit_ok;
    }
    CheckSession session(CheckOptions{.variants = p.variants, .device = device, .golden = false, .case_timeout_s = p.case_timeout});
    std::string last_line;
    std::vector<Result> last_fail;
    size_t runs = 0;
    // Drawn for the cases RapidCheck counts; gone before it prints its verdict or shrinks.
    Progress progress("cases");
    bool failing = false;
    const bool ok = rc::check(f.name + " over generated shapes", [&] {
        const Shape s = draw_shape(f);
        RC_PRE(shape_problem(f, nullptr, s).empty());
        const uint64_t seed = *rc::gen::inRange<uint64_t>(1, 1u << 20).as("seed");
        const std::string profile = *rc::gen::elementOf(f.profiles).as("profile");
        CaseGroup g{.family = &f, .catalog = "prop", .where = "prop", .shape = s, .seed = seed, .profile = profile};
        for (const VariantSpec* v : real)
            if (selected(p.variants, v->name) && shape_problem(f, v, s).empty()) g.variants.push_back(v);
        RC_PRE(!g.variants.empty());
        ++runs;
        if (!failing) progress(runs - 1, p.count, f.name);
        const auto rs = session.check_group(g, nullptr);
        if (failing || runs >= p.count || p.verbose) progress.clear();
        std::vector<Result> bad;
        for (const Result& r : rs)
            if (!r.passed()) bad.push_back(r);
        if (p.verbose)
            for (const Result& r : rs) print_result(stdout, r);
        if (!bad.empty()) {
            failing = true;
            progress.clear();
            last_line = catalog_line(f, s, seed, profile);
            last_fail = bad;
            RC_FAIL(last_line + ": " + verdict_name(bad.front().verdict));
        }
    });
    shapes += runs;
    if (ok) {
        std::printf("prop %s: %zu generated cases held (%s)\n", f.name.c_str(), runs, device ? "host models and device" : "host models");
        return exit_ok;
    }
    std::printf("prop %s: FAILED; shrunk counterexample:\n", f.name.c_str());
    for (const Result& r : last_fail) print_result(stdout, r);
    std::printf("  catalog line: %s\n", last_line.c_str());
    std::printf("  replay:       bitgate prop --family %s --seed %llu --count %zu%s\n", f.name.c_str(),
                static_cast<unsigned long long>(p.seed), p.count, device ? " --device" : "");
    if (p.append) {
        const std::string path = (p.root.empty() ? default_root() : p.root) + "/shapes/regressions.shapes";
        std::ofstream out(path, std::ios::app);
        if (!out) throw BadInput(path + ": cannot append the counterexample");
        out << last_line << "\n";
        if (!out.flush()) throw BadInput(path + ": cannot append the counterexample (write failed)");
        std::printf("  appended to %s\n", path.c_str());
        // The new regression case has no golden line yet: the next check fails with
        // golden_missing until one is made, after the defect is fixed and the model is right.
        std::printf("  then, once it holds: %s\n", regen_command(f).c_str());
    } else {
        std::printf("  (re-run with --append to add it to shapes/regressions.shapes, which every check runs first)\n");
    }
    for (auto& r : last_fail) failures.push_back(r);
    return exit_failed;
}

// prop as workers (--gpus, --workers): worker w searches its share of --count per family from its
// own seed (SEED + w), so the workers together try as many cases as one would, and each one's
// failure prints a replay line of its own. Their output is shown prefixed, in worker order.
int spread_prop(const PropOpts& p, Spread sp, size_t families) {
    if (p.append) throw BadInput("--append and --gpus/--workers exclude each other (replay the failing worker's line with --append)");
    sp.workers = int(std::min<size_t>(size_t(sp.workers), p.count));  // no worker without a case to try
    std::vector<std::vector<std::string>> argvs;
    const auto base = strip_options(command_line(), {"--gpus", "--workers", "--seed", "--count"}, {});
    std::string plan;
    for (int w = 0; w < sp.workers; ++w) {
        const size_t share = p.count / size_t(sp.workers) + (size_t(w) < p.count % size_t(sp.workers) ? 1 : 0);
        const std::string seed = std::to_string(p.seed + uint64_t(w));
        auto a = base;
        for (const std::string& x : {std::string("--seed"), seed, std::string("--count"), std::to_string(share)}) a.push_back(x);
        argvs.push_back(std::move(a));
        plan += (w ? ", " : "") + sp.what(w) + " --seed " + seed + " --count " + std::to_string(share);
    }
    std::printf("prop: seed %llu, %zu cases per family over %d workers: %s\n", static_cast<unsigned long long>(p.seed), p.count,
                sp.workers, plan.c_str());
    TempDir dir("prop");
    const auto exits = run_workers(sp, argvs, dir.path());
    int rc = exit_ok;
    size_t shapes = 0;
    for (int w = 0; w < sp.workers; ++w) {
        const WorkerExit& e = exits[size_t(w)];
        rc = std::max(rc, e.rc);
        bool summary = false;
        std::istringstream in(e.log);
        for (std::string line; std::getline(in, line);) {
            unsigned long long n = 0;
            if (std::sscanf(line.c_str(), "bitgate prop: %llu generated cases", &n) == 1) {
                shapes += n;
                summary = true;
                continue;
            }
            std::printf("[%s] %s\n", sp.what(w).c_str(), line.c_str());
        }
        if (e.signal) std::printf("[%s] killed by signal %d after %.1f s\n", sp.what(w).c_str(), e.signal, e.seconds);
        else if (!summary && e.rc < exit_bad_input) rc = std::max(rc, int(exit_internal));  // ended without its summary
    }
    std::printf("bitgate prop: %zu generated cases over %zu families: %s\n", shapes, families, rc ? "FAILED" : "all held");
    return rc;
}

int do_prop(PropOpts& p) {
    if (p.device && p.host_only) throw BadInput("--device and --host-only exclude each other");
    const Spread sp = resolve_spread(p.gpus, p.workers);  // before the GPU check: --gpus without CUDA is a usage error
    if (sp.gpus && p.host_only) throw BadInput("--gpus and --host-only exclude each other (--workers N spreads host work)");
    const std::string missing = gpu_missing();
    if (p.device && !missing.empty()) throw NoGpu(missing);
    const bool device = !p.host_only && missing.empty();
    if (p.count == 0 || p.count > 1000000) throw BadInput("--count must be between 1 and 1000000");
    p.case_timeout = checked_case_timeout(p.case_timeout);
    if (p.mutants && (p.append || sp.workers))
        throw BadInput("--mutants excludes --append (a mutant's counterexample is no regression of the real kernels) and --gpus/--workers");
    if (p.mutants && mutants_linked() == 0) throw BadInput("--mutants: no mutant variants are linked into this executable");
    // A variant that names nothing would make every generated case a discard: bad input, now.
    validate_selection(CheckOptions{.families = p.families, .variants = p.variants, .mutants = p.mutants});
    if (p.seed == 0) p.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ull;
    std::vector<const FamilySpec*> fams;
    if (p.families.empty()) fams = families();
    else for (const auto& n : p.families) fams.push_back(&family(n));
    // The summary counts the families searched: with --variant and no --family, those that have one.
    const size_t n_searched = size_t(std::count_if(fams.begin(), fams.end(), [&](const FamilySpec* f) { return searched(*f, p); }));
    if (sp.workers) return spread_prop(p, sp, n_searched);
    // RapidCheck reads its configuration once, from the environment. max_size stays <= 100.
    const std::string params = "seed=" + std::to_string(p.seed) + " max_success=" + std::to_string(p.count) +
                               " max_size=100 max_discard_ratio=50 verbose_progress=0 verbose_shrinking=0";
    setenv("RC_PARAMS", params.c_str(), 1);
    if (p.mutants) {
        std::printf("prop --mutants: seed %llu, up to %zu cases per mutant, %s\n", static_cast<unsigned long long>(p.seed), p.count,
                    device ? ("device " + gpu_name()).c_str() : "host models only");
        return prop_mutants(fams, p.variants,
                            HuntOptions{.seed = p.seed, .count = p.count, .device = device, .verbose = p.verbose,
                                        .case_timeout = p.case_timeout});
    }
    std::printf("prop: seed %llu, %zu cases per family, %s\n", static_cast<unsigned long long>(p.seed), p.count,
                device ? ("device " + gpu_name()).c_str() : "host models only");
    int rc = exit_ok;
    size_t shapes = 0;
    std::vector<Result> failures;
    for (const FamilySpec* f : fams) rc = std::max(rc, prop_family(*f, p, device, shapes, failures));
    std::printf("bitgate prop: %zu generated cases over %zu families: %s\n", shapes, n_searched, rc ? "FAILED" : "all held");
    return rc;
}

}  // namespace

std::string regen_command(const FamilySpec& f) {
    return "env -u CI bitgate golden regen --family " + f.name + "   (adds the golden line of the new regression case)";
}

void add_prop_verb(CLI::App& app, int& rc) {
    auto owned = std::make_shared<PropOpts>();  // lives as long as the callback
    PropOpts& p = *owned;
    auto* c = app.add_subcommand("prop", "property search over generated shapes, with shrinking");
    c->add_option("--family", p.families, "families (default: all)")->delimiter(',');
    c->add_option("--variant", p.variants, "variants (default: all)")->delimiter(',');
    c->add_option("--count", p.count, "generated cases per family (default 100)");
    c->add_option("--seed", p.seed, "RapidCheck seed (printed; default from the clock)");
    c->add_flag("--device", p.device, "require a GPU and diff every generated case on it");
    add_case_timeout(c, p.case_timeout);
    c->add_flag("--host-only", p.host_only, "host models only (coverage and claims)");
    c->add_flag("--mutants", p.mutants, "search each mutant (where linked) instead: it must be found and shrunk, with its class");
    c->add_flag("--append", p.append, "append a shrunk counterexample to shapes/regressions.shapes");
    c->add_flag("--verbose", p.verbose, "print every case");
    c->add_option("--root", p.root, "directory holding shapes/");
    c->add_option("--gpus", p.gpus, "spread over GPUs: all or N, one worker process per GPU (or --workers of them, dealt over the GPUs), each its share of --count from its own seed");
    c->add_option("--workers", p.workers, "spread over N worker processes (alone: every worker sees every GPU; with --gpus: each sees one)");
    c->callback([&rc, owned] { rc = do_prop(*owned); });
}

}  // namespace bitgate
