// The engine on small hand-made specs: guarded host runs, the differ, catalogs and goldens with
// their one-line errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "catalog.hpp"
#include "check.hpp"
#include "diff.hpp"
#include "errors.hpp"
#include "golden.hpp"
#include "host_run.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "toy_family.hpp"

using namespace bitgate;

namespace {

using toy::add_one;
using toy::shape_n;

std::string write_temp(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / "bitgate_engine_test";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
}

template <class F>
std::string bad_input_message(F f) {
    try {
        f();
    } catch (const BadInput& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(HostRun, SoundModelPassesAndIsDeterministic) {
    const FamilySpec f = toy::family(add_one);
    const auto in = make_inputs(f, shape_n(40), 5, "uniform");
    const ModelRun a = run_model(f, f.variants[0], shape_n(40), in, true);
    EXPECT_EQ(a.verdict, Verdict::ok);
    EXPECT_EQ(make_inputs(f, shape_n(40), 5, "uniform"), in);
    EXPECT_NE(make_inputs(f, shape_n(40), 6, "uniform"), in);
}

TEST(HostRun, UnwrittenBytesAreFound) {
    const FamilySpec f = toy::family([](const Shape& s, const HostIo& io) {
        for (int64_t i = 0; i + 1 < s["n"]; ++i) io.output<float>("y")[i] = 1.0f;  // forgets the last
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), true);
    EXPECT_EQ(r.verdict, Verdict::unwritten);
    ASSERT_FALSE(r.problems.empty());
    EXPECT_EQ(r.problems[0].bytes, 4u);
    EXPECT_NE(r.problems[0].first[0].find("i=7"), std::string::npos) << r.problems[0].first[0];
}

TEST(HostRun, WritePastTheEndHitsTheGuard) {
    const FamilySpec f = toy::family([](const Shape& s, const HostIo& io) {
        add_one(s, io);
        io.output<float>("y")[s["n"]] = 0.0f;
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), false);
    EXPECT_EQ(r.verdict, Verdict::out_of_bounds);
}

TEST(HostRun, WritingTheInputIsFound) {
    const FamilySpec f = toy::family([](const Shape& s, const HostIo& io) {
        add_one(s, io);
        const_cast<float*>(io.input<float>("x"))[2] = 9.0f;
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), false);
    EXPECT_EQ(r.verdict, Verdict::input_modified);
}

TEST(Diff, DecodesCoordinatesHexAndUlp) {
    const FamilySpec f = toy::family(add_one);
    std::vector<uint8_t> e(16, 0), a(16, 0);
    const float one = 1.0f;
    uint32_t next;
    std::memcpy(&next, &one, 4);
    ++next;
    std::memcpy(e.data() + 8, &one, 4);
    std::memcpy(a.data() + 8, &next, 4);
    const Difference d = diff_bytes(f.tensors[1], shape_n(4), e, a, Verdict::value_mismatch);
    EXPECT_EQ(d.bytes, 1u);
    EXPECT_EQ(d.elements, 1u);
    ASSERT_EQ(d.first.size(), 1u);
    EXPECT_NE(d.first[0].find("i=2"), std::string::npos) << d.first[0];
    EXPECT_NE(d.first[0].find("0000803f"), std::string::npos) << d.first[0];
    EXPECT_NE(d.first[0].find("1 ulp"), std::string::npos) << d.first[0];
}

TEST(Diff, SignedZerosDifferInBytesThoughEqualAsFloats) {
    const FamilySpec f = toy::family(add_one);
    const float pz = 0.0f, nz = -0.0f;
    std::vector<uint8_t> e(4), a(4);
    std::memcpy(e.data(), &pz, 4);
    std::memcpy(a.data(), &nz, 4);
    const Difference d = diff_bytes(f.tensors[1], shape_n(1), e, a, Verdict::value_mismatch);
    EXPECT_EQ(d.bytes, 1u);
    EXPECT_EQ(ulp_distance(0x00000000u, 0x80000000u), 0u);
    EXPECT_EQ(ulp_distance(0x00000001u, 0x80000001u), 2u);
}

TEST(Catalog, BadLinesNameFileAndLine) {
    const FamilySpec& q = family("quantize_q8_0");
    auto msg = [&](const std::string& text) {
        const std::string p = write_temp("bad.shapes", text);
        return bad_input_message([&] { read_family_catalog(q, p); });
    };
    EXPECT_NE(msg("k=896\nk=33\n").find("bad.shapes:2: impossible shape k=33"), std::string::npos) << msg("k=896\nk=33\n");
    EXPECT_NE(msg("n=5\n").find("bad.shapes:1: quantize_q8_0 has no dimension 'n'"), std::string::npos);
    EXPECT_NE(msg("k=x1\n").find("bad.shapes:1: k=x1 is not a non-negative integer"), std::string::npos);
    EXPECT_NE(msg("k=64 profiles=wobbly\n").find("bad.shapes:1: unknown profile 'wobbly'"), std::string::npos);
    EXPECT_NE(msg("@section x\n").find("bad.shapes:1: unknown directive"), std::string::npos);
    EXPECT_NE(msg("k=32\nk=64 variants=v1,v9\n").find("bad.shapes:2: family quantize_q8_0 has no variant 'v9'"),
              std::string::npos)
        << msg("k=32\nk=64 variants=v1,v9\n");
    EXPECT_NE(bad_input_message([] { read_family_catalog(family("quantize_q8_0"), "/nonexistent/x.shapes"); }).find("cannot open"),
              std::string::npos);
}

TEST(Catalog, BadRegressionLinesNameFileAndLine) {
    auto msg = [&](const std::string& text) {
        const std::string p = write_temp("regressions.shapes", text);
        return bad_input_message([&] { read_regressions(p); });
    };
    EXPECT_NE(msg("quantize_q8_0 k=32\nquantize_q8_0 k=32 variants=v2\n")
                  .find("regressions.shapes:2: family quantize_q8_0 has no variant 'v2'"),
              std::string::npos)
        << msg("quantize_q8_0 k=32\nquantize_q8_0 k=32 variants=v2\n");
    EXPECT_NE(msg("nosuch k=32\n").find("regressions.shapes:1: "), std::string::npos) << msg("nosuch k=32\n");
}

TEST(Catalog, SectionsSeedsProfilesAndBench) {
    const std::string p = write_temp("ok.shapes", "# c\n@catalog a\nk=64 seeds=1-3 profiles=ties,zeros bench # x\n@catalog b\nk=32\n");
    const auto lines = read_family_catalog(family("quantize_q8_0"), p);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].catalog, "a");
    EXPECT_EQ(lines[0].seeds, (std::vector<uint64_t>{1, 2, 3}));
    EXPECT_EQ(lines[0].profiles, (std::vector<std::string>{"ties", "zeros"}));
    EXPECT_TRUE(lines[0].bench);
    EXPECT_EQ(lines[1].catalog, "b");
    EXPECT_EQ(expand(lines[0], false).size(), 6u);
}

TEST(Golden, CorruptFilesNameFileAndLine) {
    const FamilySpec& q = family("quantize_q8_0");
    auto msg = [&](const std::string& text) {
        const std::string p = write_temp("bad.golden", text);
        return bad_input_message([&] { read_golden(q, p); });
    };
    const std::string good = "quantize_q8_0 v1 k=32 seed=1 profile=uniform y=0123456789abcdef0123456789abcdef\n";
    EXPECT_EQ(msg("# header\n" + good), "(no error)");
    EXPECT_NE(msg("# h\n" + good + good).find("bad.golden:3: duplicate line"), std::string::npos);
    EXPECT_NE(msg("quantize_q8_0 v1 k=32 seed=1 profile=uniform y=0123\n").find("bad.golden:1: digest of y"), std::string::npos);
    EXPECT_NE(msg("proj v1 k=32\n").find("bad.golden:1: expected a line starting with 'quantize_q8_0"), std::string::npos);
    EXPECT_NE(msg("quantize_q8_0 v1 k=32 profile=uniform y=0123456789abcdef0123456789abcdef\n").find("missing seed"), std::string::npos);
    EXPECT_NE(msg("quantize_q8_0 v1 k=31 seed=1 profile=uniform y=0123456789abcdef0123456789abcdef\n").find("impossible shape"),
              std::string::npos);
}

TEST(Golden, ChangedModelIsAGoldenMismatchAndMissingLineIsReported) {
    const FamilySpec& q = family("quantize_q8_0");
    const Shape s = parse_shape(q, {"k=64"}, "test");
    const Digests d = model_digests(q, variant(q, "v1"), s, 1, "uniform");
    const std::string key = golden_key(q, "v1", s, 1, "uniform");
    Digests wrong = d;
    wrong[0].second[0] = wrong[0].second[0] == '0' ? '1' : '0';
    const std::string p = write_temp("g.golden", golden_line(key, wrong) + "\n");
    const GoldenFile g = read_golden(q, p);
    CaseGroup cg{.family = &q, .catalog = "t", .where = "t", .shape = s, .seed = 1, .profile = "uniform", .variants = {&variant(q, "v1")}};
    CheckOptions o;
    auto rs = check_group(cg, o, &g);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].verdict, Verdict::golden_mismatch);
    cg.seed = 2;
    rs = check_group(cg, o, &g);
    EXPECT_EQ(rs[0].verdict, Verdict::golden_missing);
}

TEST(Registry, UnknownFamilyListsTheKnownOnes) {
    const std::string m = bad_input_message([] { family("nope"); });
    EXPECT_NE(m.find("unknown family 'nope'"), std::string::npos);
    EXPECT_NE(m.find("quantize_q8_0"), std::string::npos);
}

TEST(Catalogs, EveryShippedCatalogAndGoldenParses) {
    // The files in the tree: a typo in a catalog or golden file fails here with its line.
    for (const FamilySpec* f : families()) {
        EXPECT_NO_THROW(read_family_catalog(*f, shapes_path(default_root(), f->name))) << f->name;
        EXPECT_NO_THROW(read_golden(*f, golden_path(default_root(), f->name))) << f->name;
    }
    EXPECT_NO_THROW(read_regressions(default_root() + "/shapes/regressions.shapes"));
}

// ---- the gate cannot pass by accident ------------------------------------------------------------

namespace {

// A model that skips blocks of zeros: under `uniform` it writes everything (no input is exactly
// zero), under `zeros` half of the 32-value blocks are left as they were.
void skip_zero_blocks(const Shape& s, const HostIo& io) {
    for (int64_t b = 0; b * 32 < s["n"]; ++b) {
        bool all_zero = true;
        for (int64_t i = b * 32; i < std::min<int64_t>(s["n"], b * 32 + 32); ++i) all_zero &= io.input<float>("x")[i] == 0.0f;
        if (all_zero) continue;
        for (int64_t i = b * 32; i < std::min<int64_t>(s["n"], b * 32 + 32); ++i) io.output<float>("y")[i] = io.input<float>("x")[i] + 1.0f;
    }
}

FamilySpec toy_profiles(HostModel model) {
    FamilySpec f = toy::family(std::move(model));
    f.dims[0].hi = 4096;
    f.profiles = {"uniform", "zeros"};
    return f;
}

CaseGroup toy_group(const FamilySpec& f, int64_t n, uint64_t seed, const std::string& profile) {
    return CaseGroup{.family = &f, .catalog = "t", .where = "t", .shape = shape_n(n), .seed = seed, .profile = profile,
                     .variants = {&f.variants[0]}};
}

Result mutant_case(const std::string& expect, Verdict v) {
    return Result{.family = "f", .variant = "m", .where = "device", .verdict = v, .mutant = true, .expect = expect};
}

}  // namespace

TEST(Coverage, UnwrittenBytesAreLookedForOnEveryProfile) {
    // The zero-skipping model writes every byte under `uniform`; the check that saw it there must
    // still look again under `zeros` for the same shape.
    const FamilySpec f = toy_profiles(skip_zero_blocks);
    CheckSession session(CheckOptions{});
    const auto u = session.check_group(toy_group(f, 2048, 1, "uniform"), nullptr);
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].verdict, Verdict::ok);
    const auto z = session.check_group(toy_group(f, 2048, 1, "zeros"), nullptr);
    ASSERT_EQ(z.size(), 1u);
    EXPECT_EQ(z[0].verdict, Verdict::unwritten) << "a model leaving zero blocks unwritten passed under zeros";
}

TEST(Coverage, EachSessionLooksAfresh) {
    // What one check remembers (shapes already covered) must not leak into the next.
    const FamilySpec f = toy_profiles([](const Shape& s, const HostIo& io) {
        for (int64_t i = 0; i + 1 < s["n"]; ++i) io.output<float>("y")[i] = 1.0f;  // forgets the last
    });
    for (int i = 0; i < 2; ++i) {
        CheckSession session(CheckOptions{});
        const auto rs = session.check_group(toy_group(f, 64, 1, "uniform"), nullptr);
        ASSERT_EQ(rs.size(), 1u);
        EXPECT_EQ(rs[0].verdict, Verdict::unwritten) << "session " << i;
    }
}

TEST(GoldenCheck, AModelWritingPastItsEndFailsEvenWithTheRightDigests) {
    // The golden line holds the right digest of y; the model computes y right and then writes one
    // float past its end. Golden check must see the guard, not only the digest.
    const FamilySpec good = toy_profiles(add_one);
    const FamilySpec bad = toy_profiles([](const Shape& s, const HostIo& io) {
        add_one(s, io);
        io.output<float>("y")[s["n"]] = 0.0f;
    });
    const Shape s = shape_n(64);
    const std::string key = golden_key(good, "v", s, 1, "uniform");
    const std::string p = write_temp("toy.golden", golden_line(key, model_digests(good, good.variants[0], s, 1, "uniform")) + "\n");
    CheckSession session(CheckOptions{});
    const auto ok = session.golden_case(toy_group(good, 64, 1, "uniform"), good.variants[0], read_golden(good, p));
    EXPECT_EQ(ok.result.verdict, Verdict::ok);
    const auto gc = session.golden_case(toy_group(bad, 64, 1, "uniform"), bad.variants[0], read_golden(bad, p));
    EXPECT_EQ(gc.digests, ok.digests);
    EXPECT_EQ(gc.result.verdict, Verdict::out_of_bounds);
    EXPECT_FALSE(gc.result.passed());
    EXPECT_EQ(gc.result.case_id, "toy/v n=64 seed=1 profile=uniform");
}

TEST(Seeds, RangesAreBoundedAndNeverWrap) {
    EXPECT_EQ(parse_seeds("18446744073709551615-18446744073709551615", "t"), (std::vector<uint64_t>{18446744073709551615ull}));
    EXPECT_EQ(parse_seeds("18446744073709551614-18446744073709551615", "t").size(), 2u);
    EXPECT_EQ(parse_seeds("0", "t"), (std::vector<uint64_t>{0}));
    EXPECT_EQ(parse_seeds("1-10000", "t").size(), 10000u);
    EXPECT_NE(bad_input_message([] { parse_seeds("1-10001", "t"); }).find("more than 10000 seeds"), std::string::npos);
    EXPECT_NE(bad_input_message([] { parse_seeds("0-18446744073709551615", "t"); }).find("more than 10000"), std::string::npos);
    EXPECT_NE(bad_input_message([] { parse_seeds("1-5000,6000-12000", "t"); }).find("more than 10000"), std::string::npos);
    for (const char* bad : {"", "1,", "-1", "1-", "3-2", "1-2-3", "x", "18446744073709551616", " 1", "1e3"})
        EXPECT_NE(bad_input_message([&] { parse_seeds(bad, "t"); }), "(no error)") << bad;
}

TEST(Seeds, ASeedBeyondTheCatalogsWithoutAGoldenLineIsItsOwnState) {
    const FamilySpec& q = family("quantize_q8_0");
    const Shape s = parse_shape(q, {"k=64"}, "test");
    const std::string key = golden_key(q, "v1", s, 1, "uniform");
    const std::string p = write_temp("s.golden", golden_line(key, model_digests(q, variant(q, "v1"), s, 1, "uniform")) + "\n");
    const GoldenFile g = read_golden(q, p);
    CaseGroup cg{.family = &q, .catalog = "t", .where = "t", .shape = s, .seed = 2, .profile = "uniform",
                 .variants = {&variant(q, "v1")}, .own_seed = false};
    auto rs = check_group(cg, CheckOptions{}, &g);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].verdict, Verdict::no_golden);
    EXPECT_TRUE(rs[0].passed());
    EXPECT_NE(rs[0].note.find("no golden line for seed 2"), std::string::npos) << rs[0].note;
    rs = check_group(cg, CheckOptions{.require_golden = true}, &g);
    EXPECT_EQ(rs[0].verdict, Verdict::golden_missing);
    cg.own_seed = true;  // the catalog's own seed: a missing line is a failure whatever the flag
    rs = check_group(cg, CheckOptions{}, &g);
    EXPECT_EQ(rs[0].verdict, Verdict::golden_missing);
    // plan() marks the seeds a line does not name.
    CheckOptions o{.families = {"quantize_q8_0"}, .catalogs = {"boundaries"}, .seeds = {1, 2}};
    size_t own = 0, other = 0;
    for (const CaseGroup& x : plan(o)) (x.own_seed ? own : other)++;
    EXPECT_GT(own, 0u);
    EXPECT_EQ(own, other);
}

TEST(Selection, NamesThatSelectNothingAreBadInput) {
    EXPECT_NE(bad_input_message([] { validate_selection(CheckOptions{.families = {"quantize_q8_0"}, .variants = {"v9"}}); })
                  .find("--variant v9: no such variant in the selected families (known: v1)"),
              std::string::npos);
    EXPECT_NE(bad_input_message([] { validate_selection(CheckOptions{.catalogs = {"nosuch"}}); }).find("known: "),
              std::string::npos);
    EXPECT_EQ(bad_input_message([] { validate_selection(CheckOptions{.families = {"quantize_q8_0"}, .variants = {"v1"}, .catalogs = {"boundaries"}}); }),
              "(no error)");
    EXPECT_NE(bad_input_message([] { validate_selection(CheckOptions{.filter = {"("}}); }).find("not a regular expression"),
              std::string::npos);
    // A named family with none of the named variants: quantize_q8_0 has v1 only, add has inplace.
    EXPECT_EQ(bad_input_message([] {
                  validate_selection(CheckOptions{.families = {"add", "quantize_q8_0"}, .variants = {"inplace"}});
              }),
              "--family quantize_q8_0: none of its variants (v1) is among --variant inplace");
    EXPECT_EQ(bad_input_message([] {
                  validate_selection(CheckOptions{.families = {"add", "quantize_q8_0"}, .variants = {"inplace", "v1"}});
              }),
              "(no error)");
}

TEST(Selection, FilterTakesRegexesAndNegativePatterns) {
    const std::string id = "quantize_q8_0/v1 k=896 seed=1 profile=uniform";
    EXPECT_TRUE(filter_admits({}, id));
    EXPECT_TRUE(filter_admits({"k=896"}, id));
    EXPECT_FALSE(filter_admits({"k=32 "}, id));
    EXPECT_FALSE(filter_admits({"quantize", "-profile=uni"}, id));
    EXPECT_TRUE(filter_admits({"nomatch", "v1 k=8"}, id));
    EXPECT_FALSE(filter_admits({"-seed=1 "}, id));
    CheckOptions o{.families = {"quantize_q8_0"}, .catalogs = {"boundaries"}, .filter = {"k=64 ", "-profile=(ties|zeros)"}};
    const auto groups = plan(o);
    ASSERT_FALSE(groups.empty());
    for (const CaseGroup& g : groups) {
        EXPECT_EQ(g.shape.str(), "k=64");
        EXPECT_NE(g.profile, "ties");
        EXPECT_NE(g.profile, "zeros");
    }
}

TEST(MutantJudge, RacyMutantsAreJudgedTheSameWhicheverRunLosesTheRace) {
    const std::string racy = "unwritten|value_mismatch";
    auto judge = [](const std::vector<Result>& rs) {
        const auto t = mutant_summary(rs);
        EXPECT_EQ(t.size(), 1u);
        return t.empty() ? MutantTally{} : t[0];
    };
    // The H200 run: 107 cases caught with a declared class, one judged stale_on_reuse (run C read
    // what run A left behind). A consequence of the race, not a wrong class.
    std::vector<Result> rs(107, mutant_case(racy, Verdict::unwritten));
    rs.push_back(mutant_case(racy, Verdict::stale_on_reuse));
    MutantTally m = judge(rs);
    EXPECT_TRUE(m.passed());
    EXPECT_EQ(m.caught, 107u);
    EXPECT_EQ(m.consequence, 1u);
    EXPECT_TRUE(rs.back().passed());
    // Only consequences, never a declared class: not caught (the race may not be what was declared).
    m = judge({mutant_case(racy, Verdict::stale_on_reuse), mutant_case(racy, Verdict::ok)});
    EXPECT_FALSE(m.passed());
    // A class no race produces (a guard, an input, the launch) is wrong, racy or not.
    for (Verdict v : {Verdict::out_of_bounds, Verdict::input_modified, Verdict::launch_error, Verdict::claim_mismatch}) {
        m = judge({mutant_case(racy, Verdict::unwritten), mutant_case(racy, v)});
        EXPECT_FALSE(m.passed()) << verdict_name(v);
        EXPECT_EQ(m.wrong, 1u) << verdict_name(v);
    }
    // A mutant declaring one class is deterministic: any other class is wrong.
    m = judge({mutant_case("unwritten", Verdict::unwritten), mutant_case("unwritten", Verdict::stale_on_reuse)});
    EXPECT_FALSE(m.passed());
    EXPECT_EQ(m.wrong, 1u);
    // Never run anywhere: not a pass to report as caught, and not an escape.
    m = judge({mutant_case(racy, Verdict::skipped)});
    EXPECT_FALSE(m.passed());
    EXPECT_EQ(m.skipped, 1u);
}
