// prop --mutants: the property search must find a planted defect from generated shapes alone,
// shrink it, and report it with its class; and must say so when it finds nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "catalog.hpp"
#include "check.hpp"
#include "errors.hpp"
#include "gpu.hpp"
#include "prop.hpp"
#include "registry.hpp"
#include "toy_family.hpp"

using namespace bitgate;

namespace {

// The toy family over n in [1, 4096], with one host mutant of the given model and class.
FamilySpec toy_with_mutant(HostModel mutant_model, std::string expect = "golden_mismatch") {
    FamilySpec f = toy::family(toy::add_one);
    f.dims[0].hi = 4096;
    f.variants.push_back(VariantSpec{.name = "m", .model = std::move(mutant_model), .mutant = true,
                                     .expect = std::move(expect), .golden_as = "v"});
    return f;
}

// Differs from add_one in its last value from n = 1000 on: the least failing shape is n = 1000.
void wrong_from_1000(const Shape& s, const HostIo& io) {
    toy::add_one(s, io);
    if (s["n"] >= 1000) io.output<float>("y")[s["n"] - 1] += 1.0f;
}

int64_t dim_of(const std::string& catalog_line, const std::string& dim) {
    const auto at = catalog_line.find(" " + dim + "=");
    EXPECT_NE(at, std::string::npos) << catalog_line;
    return at == std::string::npos ? -1 : std::stoll(catalog_line.substr(at + dim.size() + 2));
}

// From n = 1000 on, the mutant's defect depends on its input: when x[0] < 0 it leaves y[0]
// unwritten (class unwritten), else it adds 1 to the last value (golden_mismatch). Shrinking the
// case's seed can turn one into the other; it must keep the class first found and end at n = 1000.
void defect_by_sign(const Shape& s, const HostIo& io) {
    const float* x = io.input<float>("x");
    float* y = io.output<float>("y");
    const bool skip_first = s["n"] >= 1000 && x[0] < 0.0f;
    for (int64_t i = skip_first ? 1 : 0; i < s["n"]; ++i) y[i] = x[i] + 1.0f;
    if (s["n"] >= 1000 && !skip_first) y[s["n"] - 1] += 1.0f;
}

}  // namespace

TEST(PropMutants, ADimensionDrawnBelowItsFloorIsRaisedToIt) {
    // Attention's ctx is drawn at least L (Dim::at_least), so its edges past the range (caches
    // beyond one fold group) come with a cache that holds them instead of being discarded.
    const FamilySpec& f = family("attention");
    bool beyond_group = false, ctx_equal = false;
    rc::Random random(uint64_t(7));
    for (int i = 0; i < 400; ++i) {
        const Shape s = rc::gen::exec([&] { return draw_shape(f); })(random.split()).value();
        ASSERT_GE(s["ctx"], s["L"]) << s.str();
        beyond_group = beyond_group || s["L"] > 4096;
        ctx_equal = ctx_equal || (s["ctx"] == s["L"] && s["L"] > 600);
    }
    EXPECT_TRUE(beyond_group) << "no draw crossed the fold's first group";
    EXPECT_TRUE(ctx_equal) << "no ctx raised to an L past its range";
}

TEST(PropMutants, ShrinksToTheLeastFailingShape) {
    const FamilySpec f = toy_with_mutant(wrong_from_1000);
    const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = 1, .count = 100});
    ASSERT_EQ(h.outcome, HuntOutcome::caught);
    EXPECT_GE(h.first, 1u);
    EXPECT_EQ(dim_of(h.catalog_line, "n"), 1000) << h.catalog_line;
    ASSERT_FALSE(h.shrunk.empty());
    EXPECT_EQ(h.shrunk.front().verdict, Verdict::golden_mismatch);
    EXPECT_EQ(h.shrunk.front().shape, "n=1000");
}

TEST(PropMutants, ShrinkingKeepsTheClassFirstFound) {
    std::set<Verdict> classes;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
        const FamilySpec f = toy_with_mutant(defect_by_sign, "unwritten");
        const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = seed, .count = 100});
        ASSERT_FALSE(h.shrunk.empty()) << "seed " << seed;
        classes.insert(h.first_class);
        EXPECT_EQ(h.shrunk.front().verdict, h.first_class) << "seed " << seed;
        EXPECT_EQ(dim_of(h.catalog_line, "n"), 1000) << "seed " << seed;
        EXPECT_EQ(h.outcome, h.first_class == Verdict::unwritten ? HuntOutcome::caught : HuntOutcome::wrong_class);
    }
    EXPECT_EQ(classes.size(), 2u) << "the seeds should find both classes first";
}

TEST(PropMutants, AMutantThatNeverDiffersIsMissedAndFails) {
    const FamilySpec f = toy_with_mutant(toy::add_one);
    const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = 1, .count = 40});
    EXPECT_EQ(h.outcome, HuntOutcome::missed);
    EXPECT_EQ(h.cases, 40u);  // every case run, none shrunk
    EXPECT_EQ(h.first, 0u);
    EXPECT_EQ(prop_mutants({&f}, {}, HuntOptions{.seed = 1, .count = 40}), int(exit_failed));
}

TEST(PropMutants, AMutantNoGeneratedShapeFitsIsMissed) {
    // RapidCheck gives up when it discards too many cases; that finds nothing and must not pass.
    FamilySpec f = toy_with_mutant(wrong_from_1000);
    f.variants[1].valid = [](const Shape&) { return std::string("valid for no shape"); };
    const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = 1, .count = 20});
    EXPECT_EQ(h.outcome, HuntOutcome::missed);
    EXPECT_EQ(h.cases, 0u);
}

TEST(PropMutants, AFindOfAnotherClassFails) {
    const FamilySpec f = toy_with_mutant(wrong_from_1000, "unwritten");
    const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = 1, .count = 100});
    EXPECT_EQ(h.outcome, HuntOutcome::wrong_class);
    EXPECT_EQ(prop_mutants({&f}, {}, HuntOptions{.seed = 1, .count = 100}), int(exit_failed));
}

TEST(PropMutants, NothingSearchedFails) {
    // A kernel mutant (no model of its own) is not searched without a device: a run of only
    // those shows nothing and must not pass.
    FamilySpec f = toy::family(toy::add_one);
    f.variants.push_back(VariantSpec{.name = "k", .mutant = true, .expect = "value_mismatch", .golden_as = "v"});
    const Hunt h = hunt_mutant(f, f.variants[1], HuntOptions{.seed = 1, .count = 10});
    EXPECT_EQ(h.outcome, HuntOutcome::not_searched);
    EXPECT_EQ(h.cases, 0u);
    EXPECT_EQ(prop_mutants({&f}, {}, HuntOptions{.seed = 1, .count = 10}), int(exit_failed));
    const FamilySpec g = toy_with_mutant(wrong_from_1000);
    EXPECT_EQ(prop_mutants({&g}, {}, HuntOptions{.seed = 1, .count = 100}), int(exit_ok));
}

// Every host-model mutant linked in is found from generated shapes within 100 cases, and the
// printed catalog line, read back as a regression line, reproduces the find through `check`.
TEST(PropMutants, EveryHostMutantIsFoundAndItsLineReplays) {
    const auto dir = std::filesystem::temp_directory_path() / "bitgate_prop_mutants_test";
    std::filesystem::create_directories(dir);
    size_t hunted = 0;
    for (const FamilySpec* f : families())
        for (const VariantSpec& m : f->variants) {
            if (!m.mutant || !m.model) continue;
            ++hunted;
            const Hunt h = hunt_mutant(*f, m, HuntOptions{.seed = 1, .count = 100});
            ASSERT_EQ(h.outcome, HuntOutcome::caught) << f->name << "/" << m.name;
            const std::string path = (dir / (f->name + ".regressions")).string();
            std::ofstream(path) << h.catalog_line << "\n";
            const auto lines = read_regressions(path);
            ASSERT_EQ(lines.size(), 1u);
            CheckSession session(CheckOptions{.golden = false, .mutants = true});
            size_t replayed = 0;
            for (CaseGroup g : expand(lines[0], true)) {
                g.variants = {&m};
                for (const Result& r : session.check_group(g, nullptr)) {
                    EXPECT_EQ(r.verdict, Verdict::golden_mismatch) << r.case_id;
                    ++replayed;
                }
            }
            EXPECT_EQ(replayed, 1u) << h.catalog_line;
            if (m.name == "m_one_split") {
                // The one-split model equals the real order up to 128 keys (docs/attention.md),
                // and no query sees more than L keys: the shrunk case must have L > 128.
                EXPECT_GT(dim_of(h.catalog_line, "L"), 128) << h.catalog_line;
            }
            if (m.name == "m_one_level_fold") {
                // The one-level fold equals the two-level one up to one group (4,096 keys).
                EXPECT_GT(dim_of(h.catalog_line, "L"), 4096) << h.catalog_line;
            }
        }
    EXPECT_GT(hunted, 0u);
}

TEST(PropMutantsDevice, EveryMutantIsFoundOnTheDevice) {
    BITGATE_REQUIRE_GPU();
    EXPECT_EQ(prop_mutants(families(), {}, HuntOptions{.seed = 1, .count = 100, .device = true}), int(exit_ok));
}
