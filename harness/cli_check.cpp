// Verbs: check, golden check|regen, list.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "catalog.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "golden.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace bitgate {

namespace {

struct CommonOpts {
    std::vector<std::string> families, variants, catalogs;
    std::string seeds, shard, json, junit, root;
    bool host_only = false, device = false, mutants = false;
};

void add_filters(CLI::App* c, CommonOpts& o) {
    c->add_option("--family", o.families, "only these families")->delimiter(',');
    c->add_option("--variant", o.variants, "only these variants")->delimiter(',');
    c->add_option("--catalog", o.catalogs, "only these catalogs (e.g. regressions, models)")->delimiter(',');
    c->add_option("--seeds", o.seeds, "seeds instead of each line's own: 1,2,3 or 1-8");
    c->add_option("--root", o.root, "directory holding shapes/ and golden/ (default: the source tree)");
    c->add_option("--json", o.json, "write the results as JSON");
    c->add_option("--junit", o.junit, "write the results as JUnit XML");
}

CheckOptions to_check_options(const CommonOpts& c) {
    CheckOptions o{.families = c.families, .variants = c.variants, .catalogs = c.catalogs, .root = c.root};
    for (const auto& f : c.families) (void)family(f);  // unknown family: exit 2 before any work
    if (!c.seeds.empty()) o.seeds = parse_seeds(c.seeds, "--seeds");
    int index = -1, count = 0;
    if (!c.shard.empty()) {
        if (std::sscanf(c.shard.c_str(), "%d/%d", &index, &count) != 2 || count < 1 || index < 0 || index >= count)
            throw BadInput("--shard " + c.shard + ": expected I/N with 0 <= I < N");
    } else if (const char* i = std::getenv("GTEST_SHARD_INDEX"), *n = std::getenv("GTEST_TOTAL_SHARDS"); i && n) {
        index = std::atoi(i);
        count = std::atoi(n);
        if (count < 1 || index < 0 || index >= count) throw BadInput("GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS out of range");
    }
    if (count > 0) {
        o.shard_index = index;
        o.shard_count = count;
    }
    return o;
}

int finish(const char* verb, const CommonOpts& c, const std::vector<Result>& rs, double seconds) {
    print_summary(stdout, verb, rs, seconds);
    if (!c.json.empty()) write_json(c.json, verb, rs, seconds);
    if (!c.junit.empty()) write_junit(c.junit, verb, rs, seconds);
    return tally(rs).failed ? exit_failed : exit_ok;
}

int do_check(const CommonOpts& c) {
    CheckOptions o = to_check_options(c);
    o.mutants = c.mutants;
    if (c.device && c.host_only) throw BadInput("--device and --host-only exclude each other");
    const std::string missing = gpu_missing();
    if (c.device && !missing.empty()) throw NoGpu(missing);
    o.device = !c.host_only && missing.empty();
    if (o.device) std::printf("device: %s\n", gpu_name().c_str());
    else std::printf("device: none (%s): host models, goldens and host claims only\n",
                     c.host_only ? "--host-only" : missing.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    Progress progress;
    const auto rs = run_check(o, [&](const Result& r) { progress.clear(); print_result(stdout, r); std::fflush(stdout); },
                              [&](size_t d, size_t n, const std::string& id) { progress(d, n, id); });
    progress.clear();
    const bool mutants_ok = !o.mutants || print_mutant_summary(stdout, rs);
    const int rc = finish("check", c, rs, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (o.mutants && rs.empty()) throw BadInput("--mutants: no mutant variants are linked into this executable");
    return mutants_ok ? rc : exit_failed;
}

// golden check: the host models' digests against the files, and no line left that no case makes.
int do_golden(const CommonOpts& c, bool regen) {
    CheckOptions o = to_check_options(c);
    if (regen && std::getenv("CI") && std::string(std::getenv("CI")) == "true")
        throw BadInput("golden regen refuses to run under CI=true: goldens change only by a reviewed commit");
    if (regen && (!c.catalogs.empty() || !c.seeds.empty() || o.shard_count > 1))
        throw BadInput("golden regen rewrites whole files: --catalog, --seeds and --shard do not apply");
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
    std::set<std::string> seen;
    Progress progress;
    size_t i = 0;
    for (const CaseGroup& g : groups) {
        progress(i++, groups.size(), g.id());
        for (const VariantSpec* v : g.variants) {
            const std::string key = golden_key(*g.family, v->name, g.shape, g.seed, g.profile);
            if (!seen.insert(key).second) continue;  // the same case from two catalog lines
            made[g.family->name].emplace_back(key, model_digests(*g.family, *v, g.shape, g.seed, g.profile));
        }
    }
    progress.clear();
    std::vector<Result> rs;
    size_t added = 0, changed = 0, removed = 0;
    for (const FamilySpec* f : families()) {
        if (!c.families.empty() && !made.count(f->name) && std::find(c.families.begin(), c.families.end(), f->name) == c.families.end()) continue;
        if (c.families.empty() && !made.count(f->name)) continue;
        const std::string path = golden_path(root, f->name);
        const GoldenFile& old = olds[f->name];
        const auto& lines = made[f->name];
        std::set<std::string> keys;
        for (const auto& [key, d] : lines) {
            keys.insert(key);
            auto it = old.lines.find(key);
            Result r{.family = f->name, .variant = key.substr(f->name.size() + 1, key.find(' ', f->name.size() + 1) - f->name.size() - 1),
                     .where = "host", .catalog = "golden", .origin = path, .case_id = key};
            if (it == old.lines.end()) {
                r.verdict = Verdict::golden_missing;
                if (regen) { std::printf("+ %s\n", golden_line(key, d).c_str()); ++added; }
            } else if (it->second != d) {
                r.verdict = Verdict::golden_mismatch;
                for (size_t k = 0; k < d.size(); ++k)
                    if (d[k] != it->second[k])
                        r.diffs.push_back(Difference{.tensor = d[k].first, .verdict = Verdict::golden_mismatch,
                                                     .first = {"golden " + it->second[k].second + " (" + old.where.at(key) + "), model " + d[k].second}});
                if (regen) { std::printf("~ %s\n  was %s\n", golden_line(key, d).c_str(), golden_line(key, it->second).c_str()); ++changed; }
            }
            if (!regen) print_result(stdout, r);
            rs.push_back(std::move(r));
        }
        const bool whole = c.catalogs.empty() && c.variants.empty() && c.seeds.empty() && o.shard_count == 1;
        for (const auto& [key, d] : old.lines) {
            if (keys.count(key) || !whole) continue;
            if (regen) { std::printf("- %s\n", golden_line(key, d).c_str()); ++removed; continue; }
            Result r{.family = f->name, .where = "host", .catalog = "golden", .origin = old.where.at(key), .case_id = key,
                     .verdict = Verdict::golden_mismatch, .note = "stale line: no catalog case makes it (run golden regen)"};
            print_result(stdout, r);
            rs.push_back(std::move(r));
        }
        // An unchanged family keeps its file, provenance header included: regen shows no noise.
        const bool family_changed = !old.exists || old.lines.size() != keys.size() ||
                                    std::any_of(lines.begin(), lines.end(), [&](const auto& l) {
                                        auto it = old.lines.find(l.first);
                                        return it == old.lines.end() || it->second != l.second;
                                    });
        if (regen && family_changed) write_golden(*f, path, lines);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (regen) {
        std::printf("bitgate golden regen: %zu lines added, %zu changed, %zu removed (%s)\n", added, changed, removed,
                    provenance().c_str());
        return exit_ok;
    }
    return finish("golden check", c, rs, secs);
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
    if (what == "mutants") {
        for (const FamilySpec* f : families())
            for (const VariantSpec& v : f->variants)
                if (v.mutant) std::printf("  %s/%s: must be caught as %s: %s\n", f->name.c_str(), v.name.c_str(), v.expect.c_str(), v.summary.c_str());
    }
}

}  // namespace

void add_check_verbs(CLI::App& app, int& rc) {
    static CommonOpts check_o, golden_o;
    auto* check = app.add_subcommand("check", "the main job: every family over its catalogs, goldens, claims, and device diffs where a GPU is present");
    add_filters(check, check_o);
    check->add_flag("--host-only", check_o.host_only, "never use a GPU");
    check->add_flag("--device", check_o.device, "require a GPU and run every device diff (exit 3 without one)");
    check->add_option("--shard", check_o.shard, "run shard I of N (also GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS)");
    check->add_flag("--mutants", check_o.mutants, "run only the mutant variants (where linked) and expect each to be caught with its class");
    check->callback([&rc] { rc = do_check(check_o); });

    auto* golden = app.add_subcommand("golden", "golden digests: check (never writes) or regen (rewrites, shows what changed)");
    golden->require_subcommand(1);
    auto* gcheck = golden->add_subcommand("check", "compare the host models' digests with golden/<family>.golden");
    auto* gregen = golden->add_subcommand("regen", "rewrite golden files from the host models (refused under CI=true)");
    for (auto* c : {gcheck, gregen}) add_filters(c, golden_o);
    gcheck->callback([&rc] { rc = do_golden(golden_o, false); });
    gregen->callback([&rc] { rc = do_golden(golden_o, true); });

    static std::string what, root;
    auto* list = app.add_subcommand("list", "families and variants, claims, catalogs, mutants");
    list->add_option("what", what, "families | variants | claims | catalogs | mutants")
        ->check(CLI::IsMember({"families", "variants", "claims", "catalogs", "mutants"}));
    list->add_option("--root", root, "directory holding shapes/ and golden/");
    list->callback([&rc] {
        do_list(what, root.empty() ? default_root() : root);
        rc = exit_ok;
    });
}

}  // namespace bitgate
