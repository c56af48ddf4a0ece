#include "check.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <map>
#include <set>

#include "device.hpp"
#include "device_run.hpp"
#include "diff.hpp"
#include "digest.hpp"
#include "errors.hpp"
#include "registry.hpp"

namespace bitgate {

std::string default_root() {
    if (const char* r = std::getenv("BITGATE_ROOT")) return r;
    return BITGATE_SOURCE_DIR;
}
std::string shapes_path(const std::string& root, const std::string& family) { return root + "/shapes/" + family + ".shapes"; }
std::string golden_path(const std::string& root, const std::string& family) { return root + "/golden/" + family + ".golden"; }

std::vector<std::string> check_inputs(const CheckOptions& o) {
    const std::string root = o.root.empty() ? default_root() : o.root;
    std::vector<std::string> out;
    for (const FamilySpec* f : families()) {
        out.push_back(shapes_path(root, f->name));
        out.push_back(golden_path(root, f->name));
    }
    return out;
}

bool selected(const std::vector<std::string>& names, const std::string& name) {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

std::string case_id(const CaseGroup& g, const VariantSpec& v) { return case_id(*g.family, v.name, g.shape, g.seed, g.profile); }

Result base_result(const CaseGroup& g, const VariantSpec& v, const char* where) {
    return Result{.family = g.family->name, .variant = v.name, .where = where, .catalog = g.catalog, .origin = g.where,
                  .case_id = case_id(g, v), .shape = g.shape.str(), .profile = g.profile, .seed = g.seed,
                  .mutant = v.mutant, .expect = v.expect};
}

Digests digests_of(const FamilySpec& f, const std::vector<Bytes>& out) {
    Digests d;
    size_t i = 0;
    for (const auto& t : f.tensors)
        if (t.role == Role::output) d.emplace_back(t.name, digest128(out[i++]));
    return d;
}

// A mutant with a model of its own is a wrong host model; one without is a wrong kernel held to
// the model of the variant it imitates.
bool is_host_mutant(const VariantSpec& v) { return v.mutant && v.model; }

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string case_id(const FamilySpec& f, const std::string& variant, const Shape& s, uint64_t seed, const std::string& profile) {
    return f.name + "/" + variant + " " + s.str() + " seed=" + std::to_string(seed) + " profile=" + profile;
}

bool filter_admits(const std::vector<std::string>& patterns, const std::string& id) {
    bool any_positive = false, positive = false;
    for (const std::string& p : patterns) {
        const bool neg = !p.empty() && p[0] == '-';
        const std::string body = neg ? p.substr(1) : p;
        std::regex re;
        try {
            re = std::regex(body);
        } catch (const std::regex_error& e) {
            throw BadInput("--filter " + p + ": not a regular expression (" + e.what() + ")");
        }
        const bool hit = std::regex_search(id, re);
        if (neg && hit) return false;
        if (!neg) {
            any_positive = true;
            positive |= hit;
        }
    }
    return !any_positive || positive;
}

bool in_shard(size_t group_index, const CheckOptions& o) {
    return o.shard_count <= 1 || int(group_index % size_t(o.shard_count)) == o.shard_index;
}

void validate_selection(const CheckOptions& o) {
    std::vector<const FamilySpec*> fams;
    for (const auto& n : o.families) fams.push_back(&family(n));  // unknown family: BadInput
    if (o.families.empty()) fams = families();
    for (const std::string& v : o.variants) {
        bool found = false;
        std::set<std::string> known;
        for (const FamilySpec* f : fams)
            for (const VariantSpec& x : f->variants)
                if (x.mutant == o.mutants) {
                    known.insert(x.name);
                    found |= x.name == v;
                }
        if (!found) {
            std::string k;
            for (const auto& n : known) k += (k.empty() ? "" : ", ") + n;
            throw BadInput("--variant " + v + ": no such " + std::string(o.mutants ? "mutant " : "") + "variant in the selected families (known: " + k + ")");
        }
    }
    // A family named beside --variant must have one of them: naming it and running none of it
    // would pass in silence.
    if (!o.families.empty() && !o.variants.empty())
        for (const FamilySpec* f : fams) {
            std::string its;
            bool any = false;
            for (const VariantSpec& x : f->variants)
                if (x.mutant == o.mutants) {
                    its += (its.empty() ? "" : ", ") + x.name;
                    any |= selected(o.variants, x.name);
                }
            if (!any)
                throw BadInput("--family " + f->name + ": none of its " + (o.mutants ? "mutant " : "") + "variants (" + its +
                               ") is among --variant " + joined(o.variants, ","));
        }
    if (!o.catalogs.empty()) {
        const std::string root = o.root.empty() ? default_root() : o.root;
        std::set<std::string> known{"regressions"};
        for (const FamilySpec* f : fams)
            for (const auto& l : read_family_catalog(*f, shapes_path(root, f->name))) known.insert(l.catalog);
        for (const std::string& c : o.catalogs)
            if (!known.count(c)) {
                std::string k;
                for (const auto& n : known) k += (k.empty() ? "" : ", ") + n;
                throw BadInput("--catalog " + c + ": no such catalog in the selected families (known: " + k + ")");
            }
    }
    for (const std::string& p : o.filter) (void)filter_admits({p}, "");  // a bad regex is bad input now
}

Digests model_digests(const FamilySpec& f, const VariantSpec& v, const Shape& s, uint64_t seed, const std::string& profile) {
    const auto in = make_inputs(f, s, seed, profile);
    return digests_of(f, run_model(f, v, s, in, false).out);
}

std::vector<CaseGroup> plan(const CheckOptions& o) {
    std::vector<CatalogLine> lines;
    const std::string root = o.root.empty() ? default_root() : o.root;
    for (const auto& l : read_regressions(root + "/shapes/regressions.shapes"))
        if (selected(o.families, l.family->name)) lines.push_back(l);
    for (const FamilySpec* f : families()) {
        if (!selected(o.families, f->name)) continue;
        for (auto& l : read_family_catalog(*f, shapes_path(root, f->name))) lines.push_back(std::move(l));
    }
    std::vector<CaseGroup> out;
    for (auto& l : lines) {
        if (!selected(o.catalogs, l.catalog)) continue;
        if (l.opt_in && o.catalogs.empty()) continue;  // opt-in catalogs run only when named
        if (!o.seeds.empty()) {
            l.own_seeds = l.seeds;
            l.seeds = o.seeds;
        }
        for (auto& g : expand(l, o.mutants)) {
            std::vector<const VariantSpec*> vs;
            for (const VariantSpec* v : g.variants)
                if (v->mutant == o.mutants && selected(o.variants, v->name) &&
                    filter_admits(o.filter, case_id(*g.family, v->name, g.shape, g.seed, g.profile)))
                    vs.push_back(v);
            g.variants = vs;
            if (!g.variants.empty()) out.push_back(std::move(g));
        }
    }
    return out;
}

ModelRun CheckSession::model(const CaseGroup& g, const VariantSpec& v, const std::vector<Bytes>& in) {
    // Unwritten bytes are looked for once per variant, shape and profile: the written set may
    // depend on the values (a model that skips all-zero blocks writes less under `zeros`), and
    // each profile is a different kind of value; seeds of one profile are more of the same kind.
    const std::string key = g.family->name + "/" + v.name + " " + g.shape.str() + " profile=" + g.profile;
    const bool coverage = !covered_.count(key);
    ModelRun m = run_model(*g.family, v, g.shape, in, coverage);
    if (coverage) covered_.insert(key);
    return m;
}

void CheckSession::hold_to_golden(Result& h, const CaseGroup& g, const VariantSpec& v, const Digests& d,
                                  const GoldenFile& golden) const {
    const FamilySpec& f = *g.family;
    const std::string key = golden_key(f, v.golden_as.empty() ? v.name : v.golden_as, g.shape, g.seed, g.profile);
    auto it = golden.lines.find(key);
    if (it == golden.lines.end() && g.opt_in) {
        h.note = "opt-in catalog: no golden line kept";
    } else if (it == golden.lines.end() && !g.own_seed && !o_.require_golden) {
        h.verdict = std::max(h.verdict, Verdict::no_golden);
        h.note = "no golden line for seed " + std::to_string(g.seed) + " (not a seed of " + g.where +
                 "; bitgate golden regen --family " + f.name + " --seeds " + std::to_string(g.seed) + " adds it)";
    } else if (it == golden.lines.end()) {
        h.verdict = std::max(h.verdict, Verdict::golden_missing);
        h.note = "no line in " + golden.path + " (run: bitgate golden regen --family " + f.name +
                 (g.own_seed ? "" : " --seeds " + std::to_string(g.seed)) + ")";
    } else if (it->second != d) {
        h.verdict = std::max(h.verdict, Verdict::golden_mismatch);
        for (size_t i = 0; i < d.size(); ++i)
            if (d[i] != it->second[i])
                h.diffs.push_back(Difference{.tensor = d[i].first, .verdict = Verdict::golden_mismatch, .bytes = 0,
                                             .first = {d[i].first + ": golden " + it->second[i].second + " (" +
                                                       golden.where.at(key) + "), model " + d[i].second}});
    }
}

CheckSession::GoldenCase CheckSession::golden_case(const CaseGroup& g, const VariantSpec& v, const GoldenFile& file) {
    const auto in = make_inputs(*g.family, g.shape, g.seed, g.profile);
    const auto t0 = std::chrono::steady_clock::now();
    ModelRun m = model(g, v, in);
    GoldenCase c{.result = base_result(g, v, "host"), .digests = digests_of(*g.family, m.out)};
    c.result.catalog = "golden";
    c.result.verdict = m.verdict;  // a model writing outside its buffers or leaving bytes unwritten fails here too
    c.result.diffs = std::move(m.problems);
    hold_to_golden(c.result, g, v, c.digests, file);
    c.result.ms = ms_since(t0);
    return c;
}

std::vector<Result> check_group(const CaseGroup& g, const CheckOptions& o, const GoldenFile* golden) {
    return CheckSession(o).check_group(g, golden);
}

std::vector<Result> CheckSession::check_group(const CaseGroup& g, const GoldenFile* golden) {
    const CheckOptions& o = o_;
    const FamilySpec& f = *g.family;
    std::vector<Result> results;
    const auto in = make_inputs(f, g.shape, g.seed, g.profile);
    std::vector<Bytes> in_c;  // made on first device use

    struct Done {
        const VariantSpec* v;
        std::vector<Bytes> out;
        Digests digests;
    };
    std::vector<Done> done;
    std::map<std::string, size_t> claim_first;  // claim -> index into done

    for (const VariantSpec* v : g.variants) {
        if (v->mutant && !is_host_mutant(*v) && !o.device) {
            Result r = base_result(g, *v, "device");
            r.verdict = Verdict::skipped;
            r.note = "device mutant: no device run";
            results.push_back(std::move(r));
            continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        ModelRun m = model(g, *v, in);
        Digests d = digests_of(f, m.out);

        // Host result: the model's own soundness, its golden line, its claim.
        const bool report_host = !v->mutant || is_host_mutant(*v);
        Result h = base_result(g, *v, "host");
        h.verdict = m.verdict;
        h.diffs = m.problems;
        if (golden && o.golden) hold_to_golden(h, g, *v, d, *golden);
        // Property search keeps no golden lines: there a host mutant is held to what its golden
        // line would hold, the model of the variant it imitates on the same inputs.
        if (!golden && o.mutants && is_host_mutant(*v)) {
            const VariantSpec& imitated = variant(f, v->golden_as);
            const std::vector<Bytes> want = run_model(f, imitated, g.shape, in, false).out;
            for (size_t i = 0; i < m.out.size(); ++i) {
                Difference diff = diff_bytes(*tensors_of(f, Role::output)[i], g.shape, want[i], m.out[i], Verdict::golden_mismatch);
                if (diff.bytes) {
                    diff.first.insert(diff.first.begin(), "model of " + v->name + " differs from model of " + imitated.name +
                                                              " (what its golden line holds)");
                    h.verdict = std::max(h.verdict, Verdict::golden_mismatch);
                    h.diffs.push_back(std::move(diff));
                }
            }
        }
        if (!v->claim.empty() && !v->mutant) {
            auto [it, fresh] = claim_first.emplace(v->claim, done.size());
            if (!fresh) {
                const Done& ref = done[it->second];
                for (size_t i = 0; i < m.out.size(); ++i) {
                    Difference diff = diff_bytes(*tensors_of(f, Role::output)[i], g.shape, ref.out[i], m.out[i], Verdict::claim_mismatch);
                    if (diff.bytes) {
                        diff.first.insert(diff.first.begin(), "claim '" + v->claim + "': model of " + v->name + " differs from model of " + ref.v->name);
                        h.verdict = std::max(h.verdict, Verdict::claim_mismatch);
                        h.diffs.push_back(std::move(diff));
                    }
                }
            }
        }
        h.ms = ms_since(t0);
        if (report_host) results.push_back(h);

        // Device result.
        if (o.device && !is_host_mutant(*v)) {
            Result r = base_result(g, *v, "device");
            const auto t1 = std::chrono::steady_clock::now();
            if (!v->launch) {
                r.verdict = Verdict::skipped;
                r.note = "no device launcher for this variant";
            } else if (device_lost()) {
                r.verdict = Verdict::skipped;
                r.note = "device context lost after an earlier launch error";
            } else {
                if (in_c.empty()) in_c = make_inputs(f, g.shape, reuse_seed(g.seed), g.profile);
                const std::vector<Bytes> expected_c = run_model(f, *v, g.shape, in_c, false).out;
                DeviceOutcome out;
                {
                    const auto watch = watchdog_.watch(case_id(g, *v) + " (device)");
                    out = run_device(DeviceCase{&f, v, g.shape, &in, &m.out, &in_c, &expected_c});
                }
                r.verdict = out.verdict;
                r.diffs = std::move(out.diffs);
                if (!v->claim.empty() && !v->mutant && !out.out_a.empty()) {
                    // Kernels claiming identity are compared with each other, not only with the model.
                    const std::string key = g.id() + " claim=" + v->claim;
                    const Digests dd = digests_of(f, out.out_a);
                    auto [it, fresh] = first_device_.emplace(key, std::make_pair(v->name, dd));
                    if (!fresh && it->second.second != dd) {
                        r.verdict = std::max(r.verdict, Verdict::claim_mismatch);
                        r.diffs.push_back(Difference{.tensor = "claim", .verdict = Verdict::claim_mismatch, .bytes = 1,
                                                     .first = {"device output of " + v->name + " differs from device output of " + it->second.first}});
                    }
                }
            }
            r.ms = ms_since(t1);
            results.push_back(std::move(r));
        }
        done.push_back(Done{v, std::move(m.out), std::move(d)});
    }
    return results;
}

std::vector<Result> run_check(const CheckOptions& o, const ResultSink& sink, const ProgressFn& progress) {
    return CheckSession(o).run(sink, progress);
}

std::vector<Result> CheckSession::run(const ResultSink& sink, const ProgressFn& progress) {
    const CheckOptions& o = o_;
    const std::string root = o.root.empty() ? default_root() : o.root;
    const auto groups = plan(o);
    std::map<std::string, GoldenFile> goldens;
    std::vector<Result> all;
    size_t index = 0, done = 0;
    const size_t mine = o.shard_count > 1 ? (groups.size() + o.shard_count - 1 - o.shard_index) / o.shard_count : groups.size();
    for (const CaseGroup& g : groups) {
        if (!in_shard(index++, o)) continue;
        if (!goldens.count(g.family->name))
            goldens[g.family->name] = read_golden(*g.family, golden_path(root, g.family->name));
        if (progress) progress(done, mine, g.id());
        for (Result& r : check_group(g, &goldens[g.family->name])) {
            r.order = int64_t(index - 1);  // the group's place in the whole plan, whichever shard runs it
            if (sink) sink(r);
            all.push_back(std::move(r));
        }
        ++done;
    }
    if (progress) progress(done, mine, "");
    return all;
}

}  // namespace bitgate
