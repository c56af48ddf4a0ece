#include "check.hpp"

#include <chrono>
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

namespace {

bool selected(const std::vector<std::string>& filter, const std::string& name) {
    if (filter.empty()) return true;
    for (const auto& f : filter)
        if (f == name) return true;
    return false;
}

std::string case_id(const CaseGroup& g, const VariantSpec& v) {
    return g.family->name + "/" + v.name + " " + g.shape.str() + " seed=" + std::to_string(g.seed) + " profile=" + g.profile;
}

Result base_result(const CaseGroup& g, const VariantSpec& v, const char* where) {
    return Result{.family = g.family->name, .variant = v.name, .where = where, .catalog = g.catalog, .origin = g.where,
                  .case_id = case_id(g, v), .mutant = v.mutant, .expect = v.expect};
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

// Shapes whose coverage (every output byte written) a model has proven: the written set
// depends on the shape, not the values, so one seed and profile per shape is enough.
std::set<std::string>& covered() {
    static std::set<std::string> s;
    return s;
}

}  // namespace

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
        if (!o.seeds.empty()) l.seeds = o.seeds;
        for (auto& g : expand(l, o.mutants)) {
            std::vector<const VariantSpec*> vs;
            for (const VariantSpec* v : g.variants)
                if (v->mutant == o.mutants && selected(o.variants, v->name)) vs.push_back(v);
            g.variants = vs;
            if (!g.variants.empty()) out.push_back(std::move(g));
        }
    }
    return out;
}

std::vector<Result> check_group(const CaseGroup& g, const CheckOptions& o, const GoldenFile* golden) {
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
        const std::string cov_key = f.name + "/" + v->name + " " + g.shape.str();
        const bool coverage = !covered().count(cov_key);
        ModelRun m = run_model(f, *v, g.shape, in, coverage);
        if (coverage) covered().insert(cov_key);
        Digests d = digests_of(f, m.out);

        // Host result: the model's own soundness, its golden line, its claim.
        const bool report_host = !v->mutant || is_host_mutant(*v);
        Result h = base_result(g, *v, "host");
        h.verdict = m.verdict;
        h.diffs = m.problems;
        if (golden && o.golden) {
            const std::string key = golden_key(f, v->golden_as.empty() ? v->name : v->golden_as, g.shape, g.seed, g.profile);
            auto it = golden->lines.find(key);
            if (it == golden->lines.end() && g.opt_in) {
                h.note = "opt-in catalog: no golden line kept";
            } else if (it == golden->lines.end()) {
                h.verdict = std::max(h.verdict, Verdict::golden_missing);
                h.note = "no line in " + golden->path + " (run: bitgate golden regen --family " + f.name + ")";
            } else if (it->second != d) {
                h.verdict = std::max(h.verdict, Verdict::golden_mismatch);
                for (size_t i = 0; i < d.size(); ++i)
                    if (d[i] != it->second[i])
                        h.diffs.push_back(Difference{.tensor = d[i].first, .verdict = Verdict::golden_mismatch, .bytes = 0,
                                                     .first = {d[i].first + ": golden " + it->second[i].second + " (" +
                                                               golden->where.at(key) + "), model " + d[i].second}});
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
                DeviceOutcome out = run_device(DeviceCase{&f, v, g.shape, &in, &m.out, &in_c, &expected_c});
                r.verdict = out.verdict;
                r.diffs = std::move(out.diffs);
                if (!v->claim.empty() && !v->mutant && !out.out_a.empty()) {
                    // Kernels claiming identity are compared with each other, not only with the model.
                    static std::map<std::string, std::pair<std::string, Digests>> first_device;
                    const std::string key = g.id() + " claim=" + v->claim;
                    const Digests dd = digests_of(f, out.out_a);
                    auto [it, fresh] = first_device.emplace(key, std::make_pair(v->name, dd));
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

std::vector<Result> run_check(const CheckOptions& o, const ResultSink& sink,
                              const std::function<void(size_t, size_t, const std::string&)>& progress) {
    const std::string root = o.root.empty() ? default_root() : o.root;
    const auto groups = plan(o);
    std::map<std::string, GoldenFile> goldens;
    std::vector<Result> all;
    size_t index = 0, done = 0;
    const size_t mine = o.shard_count > 1 ? (groups.size() + o.shard_count - 1 - o.shard_index) / o.shard_count : groups.size();
    for (const CaseGroup& g : groups) {
        if (o.shard_count > 1 && int(index++ % o.shard_count) != o.shard_index) continue;
        if (!goldens.count(g.family->name))
            goldens[g.family->name] = read_golden(*g.family, golden_path(root, g.family->name));
        if (progress) progress(done, mine, g.id());
        for (Result& r : check_group(g, o, &goldens[g.family->name])) {
            if (sink) sink(r);
            all.push_back(std::move(r));
        }
        ++done;
    }
    if (progress) progress(done, mine, "");
    return all;
}

}  // namespace bitgate
