// Verbs: check, golden check|regen, list.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "catalog.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "golden.hpp"
#include "gpus.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "shards.hpp"
#include "spread.hpp"
#include "workers.hpp"

namespace bitgate {

namespace {

struct CommonOpts {
    std::vector<std::string> families, variants, catalogs, filter;
    std::string seeds, shard, json, junit, root, gpus;
    int workers = -1;  // absent
    double case_timeout = 300;
    bool host_only = false, device = false, mutants = false;
    bool require_golden = false, allow_empty = false, quiet = false, failures_only = false, dry_run = false;
};

void add_filters(CLI::App* c, CommonOpts& o) {
    c->add_option("--family", o.families, "only these families")->delimiter(',');
    c->add_option("--variant", o.variants, "only these variants")->delimiter(',');
    c->add_option("--catalog", o.catalogs, "only these catalogs (e.g. regressions, models)")->delimiter(',');
    c->add_option("--seeds", o.seeds, "seeds instead of each line's own: 1,2,3 or 1-8 (at most 10000)");
    c->add_option("--filter", o.filter, "only case ids matching REGEX; -REGEX excludes (repeatable)");
    c->add_option("--shard", o.shard, "run shard I of N, or auto: from Slurm, Kubernetes or gtest variables (docs/sharding.md)");
    c->add_option("--gpus", o.gpus, "spread over GPUs: all or N, one worker process per GPU (or --workers of them, dealt over the GPUs), reports merged");
    c->add_option("--workers", o.workers, "spread over N worker processes (alone: every worker sees every GPU; with --gpus: each sees one)");
    c->add_option("--root", o.root, "directory holding shapes/ and golden/ (default: the source tree)");
    c->add_option("--json", o.json, "write the results as JSON");
    c->add_option("--junit", o.junit, "write the results as JUnit XML");
    c->add_flag("--require-golden", o.require_golden, "a --seeds seed without a golden line fails (golden_missing)");
    c->add_flag("--allow-empty", o.allow_empty, "a selection of zero cases passes (it fails otherwise)");
    c->add_flag("--quiet", o.quiet, "print only the summary and the failures");
    c->add_flag("--failures-only", o.failures_only, "print only the failing cases, each with its differences");
}

void parse_shard(const CommonOpts& c, CheckOptions& o) {
    const ShardSpec sh = resolve_shard(c.shard);
    o.shard_index = sh.index;
    o.shard_count = sh.count;
    if (sh.gtest) touch_gtest_status();
}

CheckOptions to_check_options(const CommonOpts& c) {
    CheckOptions o{.families = c.families, .variants = c.variants, .catalogs = c.catalogs, .require_golden = c.require_golden,
                   .filter = c.filter, .mutants = c.mutants, .root = c.root};
    if (!c.seeds.empty()) o.seeds = parse_seeds(c.seeds, "--seeds");
    o.case_timeout_s = checked_case_timeout(c.case_timeout);
    // Before the names: with no mutant linked, every --variant would read as unknown.
    if (o.mutants && mutants_linked() == 0) throw BadInput("--mutants: no mutant variants are linked into this executable");
    validate_selection(o);  // unknown family, variant, catalog or a bad regex: exit 2 before any work
    parse_shard(c, o);
    // Report files are opened before the run: a path that cannot be written is found now, not
    // after minutes of work.
    const std::vector<std::string> inputs = check_inputs(o);  // the catalogs and goldens
    if (!c.json.empty()) check_writable(c.json, "--json", inputs);
    if (!c.junit.empty()) check_writable(c.junit, "--junit", inputs);
    check_distinct_reports(c.json, c.junit);
    return o;
}

std::string shard_name(const CheckOptions& o) { return bitgate::shard_name(o.shard_index, o.shard_count); }

// The per-case line, as the output options ask.
void show(const CommonOpts& c, const Result& r) {
    if (c.quiet) return;
    if (c.failures_only && r.passed()) return;
    print_result(stdout, r);
    std::fflush(stdout);
}

int finish(const char* verb, const CommonOpts& c, const CheckOptions& o, const std::vector<Result>& rs, double seconds,
           const std::string& device) {
    print_summary(stdout, verb, rs, seconds, shard_name(o));
    print_recap(stdout, rs);
    const RunInfo info{.verb = verb, .argv = command_line(), .device = device, .shard = shard_name(o), .seconds = seconds};
    if (!c.json.empty()) write_json(c.json, info, rs);
    if (!c.junit.empty()) write_junit(c.junit, info, rs);
    if (rs.empty() && !c.allow_empty) {
        std::printf("bitgate %s: the selection has no cases: nothing was checked (--allow-empty accepts that)\n", verb);
        return exit_failed;
    }
    return tally(rs).failed ? exit_failed : exit_ok;
}

// check or golden check as workers (--gpus, --workers): the workers' merged results shown and
// reported as the run's own; the exit code is the merged verdict's, or a worker's above 1.
int spread_verb(const char* verb, const CommonOpts& c, const CheckOptions& o, const Spread& sp) {
    const auto t0 = std::chrono::steady_clock::now();
    SpreadRun run = spread_run(sp, command_line(), o.shard_index, o.shard_count);
    if (!run.complete) {
        std::printf("bitgate %s: no merged report: a worker ended with exit %d (above)\n", verb, run.worst_rc);
        return run.worst_rc;
    }
    for (const Result& r : run.results) show(c, r);
    const bool mutants_ok = !o.mutants || print_mutant_summary(stdout, run.results);
    std::string device = run.device;
    if (sp.gpus && sp.n_gpus > 1) device = std::to_string(sp.n_gpus) + " x " + device;
    const int rc = finish(verb, c, o, run.results, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), device);
    // A worker's exit 1 speaks for its shard only (under --mutants, a mutant its shard never
    // caught); the merged results above are the run's verdict. Codes above 1 still win.
    const int worker_rc = run.worst_rc > int(exit_failed) ? run.worst_rc : int(exit_ok);
    return std::max({rc, int(mutants_ok ? exit_ok : exit_failed), worker_rc});
}

int do_check(const CommonOpts& c) {
    if (c.device && c.host_only) throw BadInput("--device and --host-only exclude each other");
    CheckOptions o = to_check_options(c);
    const Spread sp = resolve_spread(c.gpus, c.workers);  // before the GPU check: --gpus without CUDA is a usage error
    if (sp.gpus && c.host_only) throw BadInput("--gpus and --host-only exclude each other (--workers N spreads host work)");
    const std::string missing = gpu_missing();
    if (c.device && !missing.empty()) throw NoGpu(missing);
    o.device = !c.host_only && missing.empty();
    const std::string device = o.device ? gpu_name() : "none";
    if (!c.quiet) {
        if (sp.gpus && sp.workers == sp.n_gpus)
            std::printf("device: %d GPU%s, one worker each: %s\n", sp.workers, sp.workers == 1 ? "" : "s", sp.gpu_names[0].c_str());
        else if (sp.gpus)
            std::printf("device: %d GPU%s, %d workers dealt over them: %s\n", sp.n_gpus, sp.n_gpus == 1 ? "" : "s", sp.workers,
                        sp.gpu_names[0].c_str());
        else if (o.device) std::printf("device: %s\n", device.c_str());
        else std::printf("device: none (%s): host models, goldens and host claims only\n",
                         c.host_only ? "--host-only" : missing.c_str());
    }
    if (sp.workers) return spread_verb("check", c, o, sp);
    const auto t0 = std::chrono::steady_clock::now();
    Progress progress;
    CheckSession session(o);
    const auto rs = session.run([&](const Result& r) { progress.clear(); show(c, r); },
                                [&](size_t d, size_t n, const std::string& id) { progress(d, n, id); });
    progress.clear();
    const bool mutants_ok = !o.mutants || print_mutant_summary(stdout, rs);
    const int rc = finish("check", c, o, rs, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), device);
    return mutants_ok ? rc : exit_failed;
}

bool is_model_problem(Verdict v) {
    return v == Verdict::unwritten || v == Verdict::out_of_bounds || v == Verdict::input_modified;
}

// golden check: the host models (in guarded buffers) against the files, and no line left that no
// case makes. golden regen: the same models, the files rewritten (or, --dry-run, only shown).
int do_golden(const CommonOpts& c, bool regen) {
    if (regen) {
        // Regeneration is a deliberate act at a desk: never inside any CI job, whatever CI holds.
        if (const char* ci = std::getenv("CI"); ci && *ci)
            throw BadInput(std::string("golden regen refuses to run under CI=") + ci + ": goldens change only by a reviewed commit");
        if (!c.catalogs.empty() || !c.shard.empty() || !c.filter.empty())
            throw BadInput("golden regen rewrites whole files: --catalog, --filter and --shard do not apply");
        if (!c.json.empty() || !c.junit.empty())
            throw BadInput("golden regen writes no report: --json and --junit do not apply (golden check writes them)");
        if (!c.gpus.empty() || c.workers != -1)
            throw BadInput("golden regen rewrites whole files in one process: --gpus and --workers do not apply");
    }
    CheckOptions o = to_check_options(c);
    if (regen && o.shard_count > 1) throw BadInput("golden regen does not shard (GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS are set)");
    if (const Spread sp = resolve_spread(c.gpus, c.workers); sp.workers) return spread_verb("golden check", c, o, sp);
    const std::string root = o.root.empty() ? default_root() : o.root;
    const auto t0 = std::chrono::steady_clock::now();
    const auto groups = plan(o);
    // Read (and so validate) every golden file before the models run: a corrupt file is an
    // error at once, not after minutes of digests.
    std::map<std::string, GoldenFile> olds;
    for (const FamilySpec* f : families())
        if (c.families.empty() || std::find(c.families.begin(), c.families.end(), f->name) != c.families.end())
            olds[f->name] = read_golden(*f, golden_path(root, f->name));
    std::map<std::string, std::vector<std::pair<std::string, Digests>>> made;  // family -> lines in plan order
    std::set<std::string> seen, planned;  // keys made; their seedless forms
    std::vector<Result> rs;
    CheckSession session(o);
    Progress progress;
    bool unsound = false;
    // Every case once and in one order, whichever shard runs it: a key that two catalog lines make
    // belongs to the first group making it, and a line at a seed no catalog names (added by regen
    // --seeds) belongs to its catalog case's first group: it is checked, and regenerated, with it.
    // Each item keeps its place in the unsharded run, so that shards' reports merge back into it.
    struct Work {
        CaseGroup g;
        const VariantSpec* v;
        int64_t order;
    };
    std::map<std::string, size_t> first_group;                                   // key -> first group making it
    std::map<std::string, std::pair<size_t, const VariantSpec*>> by_seedless;    // seedless key -> first group
    std::set<std::string> planned_families;
    for (size_t i = 0; i < groups.size(); ++i)
        for (const VariantSpec* v : groups[i].variants) {
            const std::string key = golden_key(*groups[i].family, v->name, groups[i].shape, groups[i].seed, groups[i].profile);
            first_group.emplace(key, i);
            planned.insert(seedless_key(key));
            by_seedless.emplace(seedless_key(key), std::make_pair(i, v));
            planned_families.insert(groups[i].family->name);
        }
    std::vector<Work> work;
    for (size_t i = 0; i < groups.size(); ++i)
        if (in_shard(i, o))
            for (const VariantSpec* v : groups[i].variants)
                if (first_group.at(golden_key(*groups[i].family, v->name, groups[i].shape, groups[i].seed, groups[i].profile)) == i)
                    work.push_back(Work{groups[i], v, int64_t(i)});
    int64_t next_order = int64_t(groups.size());
    for (const auto& [fam, file] : olds)
        for (const auto& [key, d] : file.lines) {
            auto it = by_seedless.find(seedless_key(key));
            if (it == by_seedless.end() || first_group.count(key)) continue;  // not a case here, or a catalog case's own
            const int64_t order = next_order++;
            if (!in_shard(it->second.first, o)) continue;
            CaseGroup g = groups[it->second.first];
            const auto at = key.find(" seed=") + 6;
            g.seed = std::stoull(key.substr(at, key.find(' ', at) - at));
            g.own_seed = false;
            work.push_back(Work{std::move(g), it->second.second, order});
        }
    for (size_t i = 0; i < work.size(); ++i) {
        const CaseGroup& g = work[i].g;
        progress(i, work.size(), g.id());
        for (const VariantSpec* v : {work[i].v}) {
            const std::string key = golden_key(*g.family, v->name, g.shape, g.seed, g.profile);
            if (!seen.insert(key).second) continue;  // the same case from two catalog lines
            auto gc = session.golden_case(g, *v, olds[g.family->name]);
            gc.result.order = work[i].order;
            if (is_model_problem(gc.result.verdict)) unsound = true;
            made[g.family->name].emplace_back(key, gc.digests);
            progress.clear();
            if (!regen) show(c, gc.result);
            else if (is_model_problem(gc.result.verdict)) print_result(stdout, gc.result);
            rs.push_back(std::move(gc.result));
        }
    }
    progress.clear();
    if (regen && unsound) {
        std::printf("bitgate golden regen: nothing written: a host model above is unsound (its digests are not a reference)\n");
        return exit_failed;
    }
    size_t added = 0, changed = 0, removed = 0;
    // Stale lines are judged only over the whole catalog: a filtered run makes a part. Whether a
    // line is stale does not depend on the shard (no planned case makes it at any seed): the
    // first shard reports them.
    const bool whole = c.catalogs.empty() && c.variants.empty() && c.filter.empty();
    for (const FamilySpec* f : families()) {
        if (!olds.count(f->name) || (c.families.empty() && !planned_families.count(f->name))) continue;
        const std::string path = golden_path(root, f->name);
        const GoldenFile& old = olds[f->name];
        auto lines = made[f->name];
        std::set<std::string> keys;
        bool family_changed = !old.exists;
        for (const auto& [key, d] : lines) {
            keys.insert(key);
            auto it = old.lines.find(key);
            if (it == old.lines.end()) {
                family_changed = true;
                if (regen) { std::printf("+ %s\n", golden_line(key, d).c_str()); ++added; }
            } else if (it->second != d) {
                family_changed = true;
                if (regen) { std::printf("~ %s\n  was %s\n", golden_line(key, d).c_str(), golden_line(key, it->second).c_str()); ++changed; }
            }
        }
        // Lines no case of this run made: kept when a catalog case still makes them at some seed
        // (lines added by regen --seeds) or when this run saw only part of the catalog.
        std::vector<std::pair<std::string, std::pair<std::string, Digests>>> kept;  // where, line
        for (const auto& [key, d] : old.lines) {
            if (keys.count(key)) continue;
            if (!whole || planned.count(seedless_key(key))) { kept.push_back({old.where.at(key), {key, d}}); continue; }
            family_changed = true;
            if (regen) { std::printf("- %s\n", golden_line(key, d).c_str()); ++removed; continue; }
            const int64_t order = next_order++;
            if (o.shard_index != 0) continue;
            // The case id's spelling: "family/variant dims seed= profile=".
            const std::string id = key.substr(0, f->name.size()) + "/" + key.substr(f->name.size() + 1);
            Result r{.family = f->name, .where = "host", .catalog = "golden", .origin = old.where.at(key), .case_id = id,
                     .verdict = Verdict::golden_mismatch, .note = "stale line: no catalog case makes it (run golden regen)", .order = order};
            show(c, r);
            rs.push_back(std::move(r));
        }
        // An unchanged family keeps its file, provenance header included: regen shows no noise.
        if (regen && family_changed && !c.dry_run) {
            std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
                auto line_no = [](const std::string& w) { return std::stol(w.substr(w.rfind(':') + 1)); };
                return line_no(a.first) < line_no(b.first);
            });
            std::vector<std::pair<std::string, Digests>> out;
            for (auto& [w, l] : kept) out.push_back(l);  // the old lines first, in their order
            for (auto& l : lines) out.push_back(l);
            write_golden(*f, path, out);
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (regen) {
        std::printf("bitgate golden regen%s: %zu lines added, %zu changed, %zu removed (%s)\n", c.dry_run ? " --dry-run (nothing written)" : "",
                    added, changed, removed, provenance().c_str());
        return exit_ok;
    }
    return finish("golden check", c, o, rs, secs, "none");
}

void do_list(const std::string& what, const std::string& root) {
    const bool all = what.empty();
    if (all || what == "families" || what == "variants") {
        for (const FamilySpec* f : families()) {
            std::printf("%s: %s\n", f->name.c_str(), f->summary.c_str());
            std::string dims;
            for (const Dim& d : f->dims) dims += " " + d.name + (d.doc.empty() ? "" : " (" + d.doc + ")");
            std::printf("  dims:%s\n", dims.c_str());
            for (const VariantSpec& v : f->variants)
                std::printf("  %-14s %s%s%s\n", v.name.c_str(), v.mutant ? "[mutant] " : "", v.summary.c_str(),
                            v.launch ? "" : "  (host model only)");
        }
    }
    if (all || what == "claims") {
        std::printf("claims (byte for byte, every output, every shape valid for both; checked on the host models and on the device):\n");
        for (const FamilySpec* f : families()) {
            std::map<std::string, std::vector<std::string>> groups;
            for (const VariantSpec& v : f->variants)
                if (!v.claim.empty() && !v.mutant) groups[v.claim].push_back(v.name);
            for (const auto& [claim, names] : groups) {
                std::string s;
                for (const auto& n : names) s += (s.empty() ? "" : " == ") + f->name + "/" + n;
                std::printf("  %s\n", s.c_str());
            }
        }
    }
    if (all || what == "catalogs") {
        for (const FamilySpec* f : families()) {
            std::map<std::string, size_t> count;
            for (const auto& l : read_family_catalog(*f, shapes_path(root, f->name))) ++count[l.catalog];
            for (const auto& [cat, n] : count) std::printf("  %-18s %-14s %zu lines\n", f->name.c_str(), cat.c_str(), n);
        }
        std::printf("  %-18s %-14s %zu lines\n", "(all)", "regressions", read_regressions(root + "/shapes/regressions.shapes").size());
    }
    if (what == "gpus") {
        // What --gpus all spreads over: the devices this process sees (CUDA_VISIBLE_DEVICES applies).
        const VisibleGpus g = visible_gpus();
        std::printf("%d GPU%s visible%s%s\n", g.count, g.count == 1 ? "" : "s", g.count ? "" : ": ", g.why_none.c_str());
        for (int i = 0; i < g.count; ++i) std::printf("  %d: %s\n", i, g.names[size_t(i)].c_str());
    }
    if (what == "mutants") {
        for (const FamilySpec* f : families())
            for (const VariantSpec& v : f->variants)
                if (v.mutant) std::printf("  %s/%s: must be caught as %s: %s\n", f->name.c_str(), v.name.c_str(), v.expect.c_str(), v.summary.c_str());
    }
}

}  // namespace

void add_check_verbs(CLI::App& app, int& rc) {
    // Option storage lives as long as the app: each callback owns its options.
    auto check_o = std::make_shared<CommonOpts>(), golden_o = std::make_shared<CommonOpts>(),
         regen_o = std::make_shared<CommonOpts>();
    auto* check = app.add_subcommand("check", "the main job: every family over its catalogs, goldens, claims, and device diffs where a GPU is present");
    add_filters(check, *check_o);
    check->add_flag("--host-only", check_o->host_only, "never use a GPU");
    check->add_flag("--device", check_o->device, "require a GPU and run every device diff (exit 3 without one)");
    add_case_timeout(check, check_o->case_timeout);
    check->add_flag("--mutants", check_o->mutants, "run only the mutant variants (where linked) and expect each to be caught with its class");
    check->callback([&rc, check_o] { rc = do_check(*check_o); });

    auto* golden = app.add_subcommand("golden", "golden digests: check (never writes) or regen (rewrites, shows what changed)");
    golden->require_subcommand(1);
    auto* gcheck = golden->add_subcommand("check", "compare the host models' digests with golden/<family>.golden");
    auto* gregen = golden->add_subcommand("regen", "rewrite golden files from the host models (refused under any non-empty CI)");
    add_filters(gcheck, *golden_o);
    add_filters(gregen, *regen_o);
    gregen->add_flag("--dry-run", regen_o->dry_run, "show the + ~ - lines, write nothing");
    gcheck->callback([&rc, golden_o] { rc = do_golden(*golden_o, false); });
    gregen->callback([&rc, regen_o] { rc = do_golden(*regen_o, true); });

    auto list_what = std::make_shared<std::pair<std::string, std::string>>();  // what, root
    auto* list = app.add_subcommand("list", "families and variants, claims, catalogs, mutants");
    list->add_option("what", list_what->first, "families | variants | claims | catalogs | mutants | gpus")
        ->check(CLI::IsMember({"families", "variants", "claims", "catalogs", "mutants", "gpus"}));
    list->add_option("--root", list_what->second, "directory holding shapes/ and golden/");
    list->callback([&rc, list_what] {
        do_list(list_what->first, list_what->second.empty() ? default_root() : list_what->second);
        rc = exit_ok;
    });
}

}  // namespace bitgate
