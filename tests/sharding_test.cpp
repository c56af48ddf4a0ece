// Sharding: the shard a process runs (from --shard, Slurm, Kubernetes or gtest variables), every
// case in exactly one shard on the real catalogs, and shard reports merging back into the
// unsharded run's report case for case.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <unistd.h>

#include "check.hpp"
#include "errors.hpp"
#include "report.hpp"
#include "report_merge.hpp"
#include "shards.hpp"
#include "workers.hpp"

using namespace bitgate;

namespace {

using Env = std::map<std::string, std::string>;

EnvLookup table(const Env& e) {
    return [&e](const char* n) -> const char* {
        auto it = e.find(n);
        return it == e.end() ? nullptr : it->second.c_str();
    };
}

std::pair<int, int> shard_of(const std::string& opt, const Env& e) {
    const ShardSpec s = resolve_shard(opt, table(e));
    return {s.index, s.count};
}

// The BadInput message, "(no error)" when there is none.
template <class F>
std::string error_of(F f) {
    try {
        f();
    } catch (const BadInput& e) {
        return e.what();
    }
    return "(no error)";
}

std::string bad_shard(const std::string& opt, const Env& e) {
    return error_of([&] { resolve_shard(opt, table(e)); });
}

// Small real families, all their catalogs (regressions included), on the host.
const std::vector<std::string> kSmall = {"quantize_q8_0", "add", "bias"};

std::vector<Result> run_shard(int index, int count) {
    CheckOptions o{.families = kSmall, .shard_index = index, .shard_count = count};
    return run_check(o, {});
}

std::string temp_dir() {
    const auto d = std::filesystem::temp_directory_path() / ("bitgate_sharding_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
}

std::string write_report(const std::string& name, int index, int count, const std::vector<Result>& rs,
                         const std::vector<std::string>& argv = {"bitgate", "check", "--host-only"}) {
    const std::string path = temp_dir() + "/" + name;
    write_json(path, RunInfo{.verb = "check", .argv = argv, .shard = shard_name(index, count), .seconds = 1}, rs);
    return path;
}

// What must survive sharding: each case, where it ran and what it concluded, in order.
std::vector<std::string> cases(const std::vector<Result>& rs) {
    std::vector<std::string> out;
    for (const Result& r : rs)
        out.push_back(r.where + " " + r.case_id + " " + verdict_name(r.verdict) + (r.passed() ? " passed" : " failed"));
    return out;
}

}  // namespace

TEST(ShardSpec, OptionAndGtestVariables) {
    EXPECT_EQ(shard_of("", {}), std::make_pair(0, 1));
    EXPECT_EQ(shard_of("1/3", {}), std::make_pair(1, 3));
    EXPECT_EQ(shard_of("0/1", {}), std::make_pair(0, 1));
    // An explicit shard wins over gtest's variables; without one they are honoured.
    EXPECT_EQ(shard_of("2/5", {{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "2"}}), std::make_pair(2, 5));
    EXPECT_EQ(shard_of("", {{"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "2"}}), std::make_pair(1, 2));
    EXPECT_TRUE(resolve_shard("", table({{"GTEST_SHARD_INDEX", "1"}, {"GTEST_TOTAL_SHARDS", "2"}})).gtest);
    for (const char* bad : {"3/2", "2/2", "1/0", "1/2x", "0/1/2", "-1/2", "1", "/2", "a/b", " 1/2", "1/ 2", "1234567890/1234567891"})
        EXPECT_NE(bad_shard(bad, {}).find("expected I/N"), std::string::npos) << bad;
    EXPECT_NE(bad_shard("", {{"GTEST_TOTAL_SHARDS", "2"}}).find("go together"), std::string::npos);
    EXPECT_NE(bad_shard("", {{"GTEST_SHARD_INDEX", "abc"}, {"GTEST_TOTAL_SHARDS", "2"}}).find("GTEST_SHARD_INDEX=abc"), std::string::npos);
    EXPECT_NE(bad_shard("", {{"GTEST_SHARD_INDEX", "2"}, {"GTEST_TOTAL_SHARDS", "2"}}).find("expected 0 <= index < total"), std::string::npos);
}

TEST(ShardSpec, AutoFromSlurmArrays) {
    // --array=0-3: tasks 0..3.
    EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
              std::make_pair(2, 4));
    // --array=1-8 starts at 1: task 1 is shard 0, task 8 shard 7.
    EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
              std::make_pair(0, 8));
    EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"},
                                {"SLURM_ARRAY_TASK_MAX", "8"}}),
              std::make_pair(7, 8));
    // --array=10-24:7 is tasks 10, 17, 24.
    EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "17"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                                {"SLURM_ARRAY_TASK_STEP", "7"}}),
              std::make_pair(1, 3));
    // Slurm comes first when a gtest runner's variables are also present.
    EXPECT_EQ(shard_of("auto", {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"},
                                {"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "3"}}),
              std::make_pair(1, 2));
    // Bad values: one line naming the variables and what is wrong.
    const std::vector<std::pair<Env, std::string>> bad = {
        {{{"SLURM_ARRAY_TASK_ID", "3"}}, "SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN must be set"},
        {{{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}, "SLURM_ARRAY_TASK_ID=x"},
        {{{"SLURM_ARRAY_TASK_ID", "-1"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}, "expected whole numbers"},
        {{{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, "not task MIN + k*STEP"},
        {{{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}, "not task MIN + k*STEP"},
        {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_STEP", "2"}},
         "not task MIN + k*STEP"},
        {{{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "0"}}, "not task MIN + k*STEP"},
        {{{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}, {"SLURM_ARRAY_TASK_STEP", "0"}},
         "not task MIN + k*STEP"},
        {{{"SLURM_ARRAY_TASK_ID", "1\n2"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}, "SLURM_ARRAY_TASK_ID=1\\n2"},
    };
    for (const auto& [env, want] : bad) {
        const std::string m = bad_shard("auto", env);
        EXPECT_NE(m.find(want), std::string::npos) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_EQ(m.rfind("--shard auto: ", 0), 0u) << m;
    }
}

TEST(ShardSpec, AutoFromKubernetesIndexedJobsAndGtest) {
    EXPECT_EQ(shard_of("auto", {{"JOB_COMPLETION_INDEX", "3"}, {"BITGATE_SHARD_COUNT", "4"}}), std::make_pair(3, 4));
    EXPECT_EQ(shard_of("auto", {{"JOB_COMPLETION_INDEX", "0"}, {"BITGATE_SHARD_COUNT", "1"}}), std::make_pair(0, 1));
    EXPECT_NE(bad_shard("auto", {{"JOB_COMPLETION_INDEX", "3"}}).find("BITGATE_SHARD_COUNT is not"), std::string::npos);
    EXPECT_NE(bad_shard("auto", {{"JOB_COMPLETION_INDEX", "4"}, {"BITGATE_SHARD_COUNT", "4"}}).find("expected 0 <= index < count"),
              std::string::npos);
    EXPECT_NE(bad_shard("auto", {{"JOB_COMPLETION_INDEX", "one"}, {"BITGATE_SHARD_COUNT", "4"}}).find("JOB_COMPLETION_INDEX=one"),
              std::string::npos);
    EXPECT_NE(bad_shard("auto", {{"JOB_COMPLETION_INDEX", "0"}, {"BITGATE_SHARD_COUNT", ""}}).find("expected 0 <= index < count"),
              std::string::npos);
    EXPECT_EQ(shard_of("auto", {{"GTEST_SHARD_INDEX", "2"}, {"GTEST_TOTAL_SHARDS", "3"}}), std::make_pair(2, 3));
    EXPECT_NE(bad_shard("auto", {{"GTEST_SHARD_INDEX", "2"}}).find("go together"), std::string::npos);
    EXPECT_NE(bad_shard("auto", {}).find("none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, GTEST_SHARD_INDEX is set"),
              std::string::npos);
}

TEST(ShardSpec, GtestStatusFileIsTouched) {
    const std::string f = temp_dir() + "/status";
    std::filesystem::remove(f);
    const Env env{{"GTEST_SHARD_STATUS_FILE", f}};
    touch_gtest_status(table(env));
    EXPECT_TRUE(std::filesystem::exists(f));
    const Env bad{{"GTEST_SHARD_STATUS_FILE", "/nonexistent/dir/status"}};
    EXPECT_NE(error_of([&] { touch_gtest_status(table(bad)); }).find("cannot create"), std::string::npos);
}

// Shard I of N over W workers: the workers' shards are exactly shard I (counted by hand for small
// cases, then by brute force).
TEST(ShardSpec, WorkersSplitAShardIntoDisjointCompleteParts) {
    EXPECT_EQ(sub_shard(0, 1, 2, 3).index, 2);
    EXPECT_EQ(sub_shard(0, 1, 2, 3).count, 3);
    EXPECT_EQ(sub_shard(1, 4, 1, 2).index, 5);  // groups 5, 13, 21, ...: the second half of shard 1/4
    EXPECT_EQ(sub_shard(1, 4, 1, 2).count, 8);
    for (int n = 1; n <= 6; ++n)
        for (int w = 1; w <= 4; ++w)
            for (int i = 0; i < n; ++i)
                for (size_t g = 0; g < 200; ++g) {
                    int owners = 0;
                    for (int k = 0; k < w; ++k) {
                        const ShardSpec s = sub_shard(i, n, k, w);
                        owners += in_shard(g, CheckOptions{.shard_index = s.index, .shard_count = s.count});
                    }
                    EXPECT_EQ(owners, int(g % size_t(n)) == i ? 1 : 0) << g << " " << i << "/" << n << " over " << w;
                }
}

// Every case of the real catalogs in exactly one shard, for N = 1..16: the plan is cut by group,
// and the cases of the shards' groups together are the unsharded plan's cases, each once.
TEST(Shards, EveryCaseExactlyOnceOverNShards) {
    const auto groups = plan(CheckOptions{.families = kSmall});
    std::map<std::string, int> want;
    for (const CaseGroup& g : groups)
        for (const VariantSpec* v : g.variants) ++want[case_id(*g.family, v->name, g.shape, g.seed, g.profile)];
    ASSERT_GT(want.size(), 40u);
    for (int n = 1; n <= 16; ++n) {
        std::map<std::string, int> got;
        for (int i = 0; i < n; ++i) {
            const CheckOptions o{.families = kSmall, .shard_index = i, .shard_count = n};
            for (size_t k = 0; k < groups.size(); ++k)
                if (in_shard(k, o))
                    for (const VariantSpec* v : groups[k].variants) ++got[case_id(*groups[k].family, v->name, groups[k].shape, groups[k].seed, groups[k].profile)];
        }
        EXPECT_EQ(got, want) << "over " << n << " shards";
    }
}

// Real host checks of the shards: every case the unsharded check runs is run by exactly one shard,
// and the shards' JSON reports merge into the unsharded run: the same cases in the same order with
// the same verdicts and the same counts (timings aside).
TEST(Shards, ShardedChecksMergeIntoTheUnshardedRun) {
    const auto whole = run_shard(0, 1);
    ASSERT_GT(whole.size(), 40u);
    std::map<std::string, int> want;
    for (const Result& r : whole) ++want[r.where + " " + r.case_id];
    for (int n : {2, 3, 16}) {
        std::map<std::string, int> got;
        std::vector<Report> parts;
        for (int i = n - 1; i >= 0; --i) {  // any order of files
            const auto rs = run_shard(i, n);
            for (const Result& r : rs) ++got[r.where + " " + r.case_id];
            parts.push_back(read_report(write_report("s" + std::to_string(i) + ".json", i, n, rs)));
        }
        EXPECT_EQ(got, want) << "over " << n << " shards";
        const Report m = merge_reports(parts);
        EXPECT_EQ(cases(m.results), cases(whole)) << n;
        const Tally a = tally(m.results), b = tally(whole);
        EXPECT_EQ(std::tie(a.total, a.ok, a.failed, a.skipped, a.no_golden, a.host, a.device),
                  std::tie(b.total, b.ok, b.failed, b.skipped, b.no_golden, b.host, b.device));
        EXPECT_EQ(m.shard_count, 1);
    }
}

// A failing case keeps its differences and note through a report; the merge keeps its place.
TEST(Shards, ReportsRoundTripFailuresAndMutants) {
    Result f{.family = "add", .variant = "v1", .where = "device", .catalog = "boundaries", .origin = "shapes/add.shapes:3",
             .case_id = "add/v1 n=5 seed=1 profile=uniform", .shape = "n=5", .profile = "uniform", .seed = 18446744073709551615ull,
             .verdict = Verdict::value_mismatch,
             .diffs = {Difference{.tensor = "y", .verdict = Verdict::value_mismatch, .bytes = 3, .elements = 1, .first = {"i=2: 0x1 0x2"}}},
             .note = "n\xc3\xa9", .ms = 2.5, .order = 4};
    Result m{.family = "add", .variant = "m1", .where = "host", .case_id = "add/m1 n=5 seed=1 profile=uniform", .verdict = Verdict::unwritten,
             .mutant = true, .expect = "unwritten|value_mismatch", .order = 9};
    const Report r = read_report(write_report("rt.json", 1, 2, {f, m}));
    ASSERT_EQ(r.results.size(), 2u);
    const Result& g = r.results[0];
    EXPECT_EQ(std::tie(g.family, g.variant, g.where, g.catalog, g.origin, g.case_id, g.shape, g.profile, g.seed, g.note, g.ms, g.order),
              std::tie(f.family, f.variant, f.where, f.catalog, f.origin, f.case_id, f.shape, f.profile, f.seed, f.note, f.ms, f.order));
    EXPECT_EQ(g.verdict, Verdict::value_mismatch);
    ASSERT_EQ(g.diffs.size(), 1u);
    EXPECT_EQ(g.diffs[0].first, f.diffs[0].first);
    EXPECT_EQ(g.diffs[0].bytes, 3u);
    EXPECT_TRUE(r.results[1].mutant);
    EXPECT_EQ(r.results[1].expect, "unwritten|value_mismatch");
    EXPECT_TRUE(r.results[1].passed());
    EXPECT_EQ(std::make_pair(r.shard_index, r.shard_count), std::make_pair(1, 2));
    EXPECT_EQ(r.argv, (std::vector<std::string>{"bitgate", "check", "--host-only"}));
}

TEST(ReportMerge, RejectsOverlappingMissingAndMismatchedShards) {
    const Result a{.family = "add", .where = "host", .case_id = "add/v1 n=1 seed=1 profile=uniform", .order = 0};
    const Result b{.family = "add", .where = "host", .case_id = "add/v1 n=2 seed=1 profile=uniform", .order = 1};
    const Result c{.family = "add", .where = "host", .case_id = "add/v1 n=3 seed=1 profile=uniform", .order = 2};
    const std::string s0 = write_report("m0.json", 0, 3, {a}), s1 = write_report("m1.json", 1, 3, {b}),
                      s2 = write_report("m2.json", 2, 3, {c});
    auto merge = [](const std::vector<std::string>& files) {
        return error_of([&] {
            std::vector<Report> parts;
            for (const auto& f : files) parts.push_back(read_report(f));
            merge_reports(parts);
        });
    };
    EXPECT_EQ(merge({s0, s1, s2}), "(no error)");
    EXPECT_NE(merge({s0, s2}).find("shard 1/3 missing (given: " + s0 + " 0/3, " + s2 + " 2/3)"), std::string::npos) << merge({s0, s2});
    EXPECT_NE(merge({s0, s1, s2, s1}).find(s1 + ": shard 1/3 again (" + s1 + " is the same shard)"), std::string::npos);
    const std::string other_n = write_report("n4.json", 1, 4, {b});
    EXPECT_NE(merge({s0, other_n, s2}).find(other_n + ": shard 1/4, but " + s0 + " is shard 0/3"), std::string::npos)
        << merge({s0, other_n, s2});
    const std::string whole = write_report("w.json", 0, 1, {a, b, c});
    EXPECT_NE(merge({s0, whole}).find(whole + ": shard none (the whole run)"), std::string::npos);
    EXPECT_NE(merge({whole, whole}).find("again"), std::string::npos);
    EXPECT_EQ(merge({whole}), "(no error)");
    // Another selection, or another verb or build: not shards of one run.
    const std::string fam = write_report("f.json", 1, 3, {b}, {"bitgate", "check", "--host-only", "--family", "bias"});
    EXPECT_NE(merge({s0, fam, s2}).find(fam + ": selection bitgate check --host-only --family bias, but " + s0 +
                                         " has bitgate check --host-only: not shards of one run"),
              std::string::npos)
        << merge({s0, fam, s2});
    // How a shard ran and reported is not its selection.
    const std::string how = write_report("h.json", 1, 3, {b}, {"/elsewhere/bitgate", "check", "--host-only", "--shard=1/3", "--json", "x",
                                                             "--quiet", "--workers", "2", "--gpus=all", "--junit", "y", "--allow-empty"});
    EXPECT_EQ(merge({s0, how, s2}), "(no error)");
    std::string text;
    {
        std::ifstream f(s1);
        text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    auto variant_of = [&](const std::string& from, const std::string& to, const std::string& name) {
        std::string t = text;
        const auto at = t.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        t.replace(at, from.size(), to);
        const std::string path = temp_dir() + "/" + name;
        std::ofstream(path) << t;
        return path;
    };
    const std::string commit = variant_of("\"build_commit\": \"", "\"build_commit\": \"other", "c.json");
    EXPECT_NE(merge({s0, commit, s2}).find(commit + ": build commit other"), std::string::npos) << merge({s0, commit, s2});
    const std::string verb = variant_of("\"verb\": \"check\"", "\"verb\": \"golden check\"", "v.json");
    EXPECT_NE(merge({s0, verb, s2}).find(verb + ": verb golden check, but"), std::string::npos);
    // The same case in two shards: the shards overlap.
    const std::string dup = write_report("d.json", 1, 3, {a});
    EXPECT_NE(merge({s0, dup, s2}).find(dup + ": case add/v1 n=1 seed=1 profile=uniform also in " + s0), std::string::npos)
        << merge({s0, dup, s2});
    // A case without its place in the run (a report of an older bitgate) cannot be merged.
    Result no_order = b;
    no_order.order = -1;
    const std::string old = write_report("o.json", 1, 3, {no_order});
    EXPECT_NE(merge({s0, old, s2}).find(old + ": results[0] has no order"), std::string::npos);
}

TEST(ReportRead, BadReportsAreOneLineNamingTheFileAndField) {
    const std::string good = write_report("g.json", 0, 2, {Result{.family = "add", .where = "host", .case_id = "x", .order = 0}});
    std::string text;
    {
        std::ifstream f(good);
        text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    EXPECT_EQ(error_of([&] { parse_report(text, "g.json"); }), "(no error)");
    auto bad = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        const auto at = t.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        if (at != std::string::npos) t.replace(at, from.size(), to);
        return error_of([&] { parse_report(t, "r.json"); });
    };
    const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
        {"\"format\": 2", "\"format\": 3", "r.json: format: this bitgate reads report format 2, the file is 3"},
        {"\"verdict\": \"ok\"", "\"verdict\": \"okay\"", "r.json: results[0].verdict: unknown verdict 'okay'"},
        {"\"passed\": true", "\"passed\": false", "r.json: results[0].passed: says false but verdict ok means passed"},
        {"\"seed\": 0", "\"seed\": -1", "r.json: results[0].seed: expected a whole number"},
        {"\"seed\": 0", "\"seed\": \"0\"", "r.json: results[0].seed: expected a whole number"},
        {"\"shard\": \"0/2\"", "\"shard\": \"2/2\"", "r.json: shard: expected null or I/N"},
        {"\"where\": \"host\"", "\"where\": \"gpu\"", "r.json: results[0].where: expected host or device"},
        {"\"total\": 1", "\"total\": 2", "r.json: summary.total: says 2, the results hold 1"},
        {"\"case\": \"x\",", "", "r.json: results[0]: no field 'case'"},
        {"{", "[", "r.json: not a JSON report"},
        {"\"argv\": [", "\"argv\": [1,", "r.json: report.argv: expected an array of strings"},
    };
    for (const auto& [from, to, want] : cases) {
        const std::string m = bad(from, to);
        EXPECT_EQ(m.rfind(want, 0), 0u) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
    EXPECT_NE(error_of([] { read_report("/nonexistent/r.json"); }).find("/nonexistent/r.json: cannot open"), std::string::npos);
}

TEST(Workers, WorkersAreDealtOverTheGpusEvenly) {
    for (int gpus = 1; gpus <= 8; ++gpus)
        for (int workers = gpus; workers <= 40; ++workers) {
            std::vector<int> load(size_t(gpus), 0);
            for (int w = 0; w < workers; ++w) {
                const int g = gpu_of_worker(w, gpus);
                ASSERT_TRUE(g >= 0 && g < gpus) << w << " of " << workers << " over " << gpus;
                ++load[size_t(g)];
            }
            const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
            EXPECT_GE(*lo, 1) << workers << " over " << gpus;  // every GPU has a worker
            EXPECT_LE(*hi - *lo, 1) << workers << " over " << gpus;
        }
    using V = std::vector<std::string>;
    EXPECT_EQ(visible_of_workers({}, 2, 5), (V{"0", "1", "0", "1", "0"}));
    EXPECT_EQ(visible_of_workers({"2", "3"}, 2, 5), (V{"2", "3", "2", "3", "2"}));  // under CUDA_VISIBLE_DEVICES=2,3
    EXPECT_EQ(visible_of_workers({"5", "7", "9"}, 2, 3), (V{"5", "7", "5"}));      // --gpus 2 of three visible
    Spread one_each{.workers = 2, .gpus = true, .n_gpus = 2};
    Spread shared{.workers = 5, .gpus = true, .n_gpus = 2};
    Spread plain{.workers = 3};
    EXPECT_EQ(one_each.what(1), "GPU 1");
    EXPECT_EQ(shared.what(3), "worker 3 (GPU 1)");
    EXPECT_EQ(shared.what(4), "worker 4 (GPU 0)");
    EXPECT_EQ(plain.what(2), "worker 2");
}

TEST(Workers, OptionsAreStrippedInBothSpellings) {
    const std::vector<std::string> argv = {"bitgate", "check", "--gpus", "2", "--family", "add", "--json=r.json", "--quiet", "--shard", "1/2"};
    EXPECT_EQ(strip_options(argv, {"--gpus", "--json", "--shard"}, {"--quiet"}),
              (std::vector<std::string>{"bitgate", "check", "--family", "add"}));
    // --gpus with --workers: at least a worker a GPU, checked before any GPU is looked for.
    EXPECT_NE(error_of([] { resolve_spread("4", 3); }).find("--workers 3 with --gpus 4: fewer workers than the 4 GPUs"), std::string::npos);
    EXPECT_NE(error_of([] { resolve_spread("2", 2000); }).find("--workers 2000: expected 1 to 1024"), std::string::npos);
    EXPECT_NE(error_of([] { resolve_spread("", 5000); }).find("--workers 5000: expected 1 to 1024"), std::string::npos);
    EXPECT_NE(error_of([] { resolve_spread("two", -1); }).find("--gpus two: expected all or a number"), std::string::npos);
    EXPECT_EQ(resolve_spread("", 3).workers, 3);
    EXPECT_FALSE(resolve_spread("", 3).gpus);
    EXPECT_EQ(resolve_spread("", -1).workers, 0);  // no --workers: no spreading
    EXPECT_NE(error_of([] { resolve_spread("", 0); }).find("--workers 0: expected 1 to 1024"), std::string::npos);
    EXPECT_NE(error_of([] { resolve_spread("", -2); }).find("--workers -2: expected 1 to 1024"), std::string::npos);
}
