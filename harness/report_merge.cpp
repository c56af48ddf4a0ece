#include "report_merge.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli.hpp"
#include "errors.hpp"
#include "report.hpp"
#include "shards.hpp"
#include "workers.hpp"

namespace bitgate {

namespace {

using nlohmann::json;

// Field access that says where a report is wrong: "r.json: results[3].seed: expected ...".
struct Reader {
    const std::string& path;

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw BadInput(path + ": " + where + ": " + what);
    }
    const json& field(const json& obj, const std::string& where, const char* key) const {
        if (!obj.is_object()) fail(where, "expected an object");
        auto it = obj.find(key);
        if (it == obj.end()) fail(where, std::string("no field '") + key + "'");
        return *it;
    }
    std::string str(const json& obj, const std::string& where, const char* key) const {
        const json& v = field(obj, where, key);
        if (!v.is_string()) fail(where + "." + key, "expected a string");
        return v.get<std::string>();
    }
    std::string opt_str(const json& obj, const std::string& where, const char* key) const {
        return obj.contains(key) ? str(obj, where, key) : "";
    }
    uint64_t uint(const json& obj, const std::string& where, const char* key) const {
        const json& v = field(obj, where, key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
            fail(where + "." + key, "expected a whole number");
        return v.get<uint64_t>();
    }
    double number(const json& obj, const std::string& where, const char* key) const {
        const json& v = field(obj, where, key);
        if (!v.is_number()) fail(where + "." + key, "expected a number");
        return v.get<double>();
    }
    Verdict verdict(const json& obj, const std::string& where) const {
        const std::string s = str(obj, where, "verdict");
        Verdict v{};
        if (!verdict_from_name(s, v)) fail(where + ".verdict", "unknown verdict '" + s + "'");
        return v;
    }
    std::vector<std::string> strings(const json& obj, const std::string& where, const char* key) const {
        const json& v = field(obj, where, key);
        if (!v.is_array()) fail(where + "." + key, "expected an array of strings");
        std::vector<std::string> out;
        for (const json& s : v) {
            if (!s.is_string()) fail(where + "." + key, "expected an array of strings");
            out.push_back(s.get<std::string>());
        }
        return out;
    }
};

Result read_result(const Reader& rd, const json& j, const std::string& where) {
    Result r{.family = rd.str(j, where, "family"), .variant = rd.str(j, where, "variant"), .where = rd.str(j, where, "where"),
             .catalog = rd.str(j, where, "catalog"), .origin = rd.str(j, where, "origin"), .case_id = rd.str(j, where, "case"),
             .shape = rd.str(j, where, "shape"), .profile = rd.str(j, where, "profile"), .seed = rd.uint(j, where, "seed"),
             .verdict = rd.verdict(j, where), .note = rd.opt_str(j, where, "note"), .ms = rd.number(j, where, "ms")};
    if (r.where != "host" && r.where != "device") rd.fail(where + ".where", "expected host or device, not '" + r.where + "'");
    if (j.contains("mutant_expect")) {
        r.mutant = true;
        r.expect = rd.str(j, where, "mutant_expect");
    }
    if (j.contains("order")) r.order = static_cast<int64_t>(std::min<uint64_t>(rd.uint(j, where, "order"), uint64_t(1) << 62));
    const json& diffs = rd.field(j, where, "differences");
    if (!diffs.is_array()) rd.fail(where + ".differences", "expected an array");
    for (size_t i = 0; i < diffs.size(); ++i) {
        const std::string w = where + ".differences[" + std::to_string(i) + "]";
        r.diffs.push_back(Difference{.tensor = rd.str(diffs[i], w, "tensor"), .verdict = rd.verdict(diffs[i], w),
                                     .bytes = rd.uint(diffs[i], w, "bytes"), .elements = rd.uint(diffs[i], w, "elements"),
                                     .first = rd.strings(diffs[i], w, "first")});
    }
    // "passed" is derived; a report whose word disagrees with its verdict was altered or is broken.
    const json& passed = rd.field(j, where, "passed");
    if (!passed.is_boolean()) rd.fail(where + ".passed", "expected true or false");
    if (passed.get<bool>() != r.passed())
        rd.fail(where + ".passed", std::string("says ") + (passed.get<bool>() ? "true" : "false") + " but verdict " +
                                       verdict_name(r.verdict) + " means " + (r.passed() ? "passed" : "failed"));
    return r;
}

}  // namespace

Report parse_report(std::string_view text, const std::string& path) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw BadInput(path + ": not a JSON report (" + e.what() + ")");
    }
    const Reader rd{path};
    if (!j.is_object()) throw BadInput(path + ": not a JSON report (expected an object)");
    const json& format = rd.field(j, "report", "format");
    if (!format.is_number_integer() || format.get<int64_t>() != kJsonFormat)
        rd.fail("format", "this bitgate reads report format " + std::to_string(kJsonFormat) + ", the file is " + format.dump());
    Report r{.path = path, .bitgate = rd.str(j, "report", "bitgate"), .build_commit = rd.str(j, "report", "build_commit"),
             .verb = rd.str(j, "report", "verb"), .device = rd.str(j, "report", "device"),
             .argv = rd.strings(j, "report", "argv")};
    const json& shard = rd.field(j, "report", "shard");
    if (!shard.is_null() && (!shard.is_string() || !parse_shard_name(shard.get<std::string>(), r.shard_index, r.shard_count)))
        rd.fail("shard", "expected null or I/N with 0 <= I < N, not " + shard.dump());
    const json& summary = rd.field(j, "report", "summary");
    r.seconds = rd.number(summary, "summary", "seconds");
    const json& results = rd.field(j, "report", "results");
    if (!results.is_array()) rd.fail("results", "expected an array");
    for (size_t i = 0; i < results.size(); ++i) r.results.push_back(read_result(rd, results[i], "results[" + std::to_string(i) + "]"));
    // The summary is the results counted: a file cut or edited by hand says otherwise.
    const Tally t = tally(r.results);
    const std::pair<const char*, size_t> counts[] = {{"total", t.total}, {"ok", t.ok}, {"failed", t.failed}, {"skipped", t.skipped}};
    for (const auto& [key, n] : counts)
        if (rd.uint(summary, "summary", key) != n)
            rd.fail(std::string("summary.") + key, "says " + std::to_string(rd.uint(summary, "summary", key)) + ", the results hold " + std::to_string(n));
    return r;
}

Report read_report(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw BadInput(path + ": cannot open the report");
    std::ostringstream s;
    s << f.rdbuf();
    if (f.bad()) throw BadInput(path + ": cannot read the report");
    return parse_report(s.str(), path);
}

std::vector<std::string> selection_argv(const std::vector<std::string>& argv) {
    if (argv.empty()) return {};
    std::vector<std::string> out = strip_options(std::vector<std::string>(argv.begin() + 1, argv.end()),
                                                 {"--shard", "--json", "--junit", "--gpus", "--workers"},
                                                 {"--quiet", "--failures-only", "--allow-empty"});
    const auto slash = argv[0].rfind('/');
    out.insert(out.begin(), slash == std::string::npos ? argv[0] : argv[0].substr(slash + 1));
    return out;
}

Report merge_reports(const std::vector<Report>& parts, int index, int count) {
    if (parts.empty()) throw BadInput("report merge: no reports given");
    const Report& first = parts.front();
    const auto sel = selection_argv(first.argv);
    const std::string want = count > 1 ? " of shard " + shard_name(index, count) : "";
    std::map<int, const Report*> seen;  // shard index -> its report
    for (const Report& p : parts) {
        auto differs = [&](const char* what, const std::string& a, const std::string& b) {
            if (a != b)
                throw BadInput(p.path + ": " + what + " " + a + ", but " + first.path + " has " + b +
                               ": not shards of one run");
        };
        differs("bitgate", p.bitgate, first.bitgate);
        differs("build commit", p.build_commit, first.build_commit);
        differs("verb", p.verb, first.verb);
        differs("selection", joined(selection_argv(p.argv), " "), joined(sel, " "));
        if (p.shard_count != first.shard_count)
            throw BadInput(p.path + ": shard " + (p.shard_count > 1 ? shard_name(p.shard_index, p.shard_count) : "none (the whole run)") +
                           ", but " + first.path + " is " + (first.shard_count > 1 ? "shard " + shard_name(first.shard_index, first.shard_count) : "the whole run") +
                           ": shards of one run have one N");
        if (p.shard_count % count != 0 || p.shard_index % count != index)
            throw BadInput(p.path + ": shard " + shard_name(p.shard_index, p.shard_count) + " is not part" + want);
        auto [it, fresh] = seen.emplace(p.shard_index, &p);
        if (!fresh)
            throw BadInput(p.path + ": shard " + (p.shard_count > 1 ? shard_name(p.shard_index, p.shard_count) : "none (the whole run)") +
                           " again (" + it->second->path + " is the same shard)");
    }
    const int n = first.shard_count;
    std::string missing;
    for (int i = index; i < n; i += count)
        if (!seen.count(i)) missing += (missing.empty() ? "" : ", ") + shard_name(i, n);
    if (!missing.empty()) {
        std::string given;
        for (const auto& [i, p] : seen) given += (given.empty() ? "" : ", ") + p->path + " " + shard_name(i, n);
        throw BadInput("report merge: shard " + missing + " missing" + want + " (given: " + given + ")");
    }

    Report out{.path = "merged", .bitgate = first.bitgate, .build_commit = first.build_commit, .verb = first.verb,
               .argv = strip_options(first.argv, {"--shard", "--json", "--junit"}, {}), .shard_index = index, .shard_count = count};
    std::set<std::string> devices;
    std::vector<std::pair<const Report*, Result>> all;
    for (const auto& [i, p] : seen) {
        if (!devices.count(p->device)) out.device += (out.device.empty() ? "" : " + ") + p->device;
        devices.insert(p->device);
        out.seconds = std::max(out.seconds, p->seconds);  // shards run side by side: the longest
        for (size_t k = 0; k < p->results.size(); ++k) {
            if (n > 1 && p->results[k].order < 0)
                throw BadInput(p->path + ": results[" + std::to_string(k) + "] has no order (a report of an older bitgate): cannot merge");
            all.emplace_back(p, p->results[k]);
        }
    }
    // Each result's order is its case's place in the unsharded run; one case belongs to one
    // shard, so a place held by two files is a case reported twice.
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second.order < b.second.order; });
    for (size_t k = 1; k < all.size(); ++k)
        if (all[k].first != all[k - 1].first && all[k].second.order == all[k - 1].second.order)
            throw BadInput(all[k].first->path + ": case " + all[k].second.case_id + " also in " + all[k - 1].first->path +
                           ": the shards overlap");
    for (auto& [p, r] : all) out.results.push_back(std::move(r));
    return out;
}

namespace {

struct MergeOpts {
    std::vector<std::string> files;
    std::string json, junit;
    bool quiet = false;
};

bool has_arg(const std::vector<std::string>& argv, const char* a) { return std::find(argv.begin(), argv.end(), a) != argv.end(); }

int do_merge(const MergeOpts& m) {
    if (!m.json.empty()) check_writable(m.json, "--json", m.files);
    if (!m.junit.empty()) check_writable(m.junit, "--junit", m.files);
    check_distinct_reports(m.json, m.junit);
    std::vector<Report> parts;
    for (const auto& f : m.files) parts.push_back(read_report(f));
    const Report r = merge_reports(parts);
    std::printf("report merge: %zu report%s of `%s`, %zu cases\n", parts.size(), parts.size() == 1 ? "" : "s",
                printable(joined(selection_argv(r.argv), " ")).c_str(), r.results.size());
    if (!m.quiet)
        for (const Result& x : r.results)
            if (!x.passed()) print_result(stdout, x);
    const bool mutants = has_arg(r.argv, "--mutants");
    const bool mutants_ok = !mutants || print_mutant_summary(stdout, r.results);
    print_summary(stdout, r.verb.c_str(), r.results, r.seconds);
    print_recap(stdout, r.results);
    const RunInfo info{.verb = r.verb, .argv = r.argv, .device = r.device, .seconds = r.seconds};
    if (!m.json.empty()) write_json(m.json, info, r.results);
    if (!m.junit.empty()) write_junit(m.junit, info, r.results);
    bool allow_empty = false;
    for (const Report& p : parts) allow_empty |= has_arg(p.argv, "--allow-empty");
    if (r.results.empty() && !allow_empty) {
        std::printf("bitgate report merge: the run has no cases: nothing was checked\n");
        return exit_failed;
    }
    return tally(r.results).failed || !mutants_ok ? exit_failed : exit_ok;
}

}  // namespace

void add_report_verbs(CLI::App& app, int& rc) {
    auto m = std::make_shared<MergeOpts>();
    auto* report = app.add_subcommand("report", "reports: merge the JSON reports of shards into the report of the whole run");
    report->require_subcommand(1);
    auto* merge = report->add_subcommand("merge", "merge shard reports (each I of N exactly once, one build, one selection)");
    merge->add_option("reports", m->files, "the shards' JSON reports (--json of check or golden check)")->required();
    merge->add_option("--json", m->json, "write the merged report as JSON");
    merge->add_option("--junit", m->junit, "write the merged report as JUnit XML");
    merge->add_flag("--quiet", m->quiet, "print only the summary");
    merge->callback([&rc, m] { rc = do_merge(*m); });
}

}  // namespace bitgate
