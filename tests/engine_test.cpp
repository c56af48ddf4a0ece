// The engine on small hand-made specs: guarded host runs, the differ, catalogs and goldens with
// their one-line errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "bitgate/inputs.hpp"
#include "catalog.hpp"
#include "check.hpp"
#include "diff.hpp"
#include "errors.hpp"
#include "golden.hpp"
#include "host_run.hpp"
#include "registry.hpp"

using namespace bitgate;

namespace {

// A toy family: y[i] = x[i] + 1 over n floats, with models broken in the ways the engine must see.
FamilySpec toy(HostModel model) {
    return FamilySpec{
        .name = "toy",
        .dims = {{.name = "n", .lo = 1, .hi = 64}},
        .tensors = {{.name = "x", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                     .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> b) { inputs::fill_f32(b, r, s["n"]); }},
                    {.name = "y", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                     .decode = [](const Shape&, size_t off) { return "i=" + std::to_string(off / 4); }}},
        .profiles = {"uniform"},
        .variants = {{.name = "v", .model = std::move(model)}},
    };
}

Shape shape_n(int64_t n) { return Shape{{"n"}, {n}, "toy"}; }

void add_one(const Shape& s, const HostIo& io) {
    for (int64_t i = 0; i < s["n"]; ++i) io.output<float>("y")[i] = io.input<float>("x")[i] + 1.0f;
}

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
    const FamilySpec f = toy(add_one);
    const auto in = make_inputs(f, shape_n(40), 5, "uniform");
    const ModelRun a = run_model(f, f.variants[0], shape_n(40), in, true);
    EXPECT_EQ(a.verdict, Verdict::ok);
    EXPECT_EQ(make_inputs(f, shape_n(40), 5, "uniform"), in);
    EXPECT_NE(make_inputs(f, shape_n(40), 6, "uniform"), in);
}

TEST(HostRun, UnwrittenBytesAreFound) {
    const FamilySpec f = toy([](const Shape& s, const HostIo& io) {
        for (int64_t i = 0; i + 1 < s["n"]; ++i) io.output<float>("y")[i] = 1.0f;  // forgets the last
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), true);
    EXPECT_EQ(r.verdict, Verdict::unwritten);
    ASSERT_FALSE(r.problems.empty());
    EXPECT_EQ(r.problems[0].bytes, 4u);
    EXPECT_NE(r.problems[0].first[0].find("i=7"), std::string::npos) << r.problems[0].first[0];
}

TEST(HostRun, WritePastTheEndHitsTheGuard) {
    const FamilySpec f = toy([](const Shape& s, const HostIo& io) {
        add_one(s, io);
        io.output<float>("y")[s["n"]] = 0.0f;
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), false);
    EXPECT_EQ(r.verdict, Verdict::out_of_bounds);
}

TEST(HostRun, WritingTheInputIsFound) {
    const FamilySpec f = toy([](const Shape& s, const HostIo& io) {
        add_one(s, io);
        const_cast<float*>(io.input<float>("x"))[2] = 9.0f;
    });
    const ModelRun r = run_model(f, f.variants[0], shape_n(8), make_inputs(f, shape_n(8), 1, "uniform"), false);
    EXPECT_EQ(r.verdict, Verdict::input_modified);
}

TEST(Diff, DecodesCoordinatesHexAndUlp) {
    const FamilySpec f = toy(add_one);
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
    const FamilySpec f = toy(add_one);
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
    EXPECT_NE(msg("k=64 profiles=wobbly\n").find("unknown profile 'wobbly'"), std::string::npos);
    EXPECT_NE(msg("@section x\n").find("unknown directive"), std::string::npos);
    EXPECT_NE(msg("k=64 variants=v9\n").find("no variant 'v9'"), std::string::npos);
    EXPECT_NE(bad_input_message([] { read_family_catalog(family("quantize_q8_0"), "/nonexistent/x.shapes"); }).find("cannot open"),
              std::string::npos);
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
