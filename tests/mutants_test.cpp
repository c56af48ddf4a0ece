// Every mutant variant linked into this binary must be caught with its class: host-model mutants
// by the golden check, kernel mutants by the device runs (skipped without a GPU).
#include <gtest/gtest.h>

#include "check.hpp"
#include "gpu.hpp"
#include "registry.hpp"
#include "report.hpp"

using namespace bitgate;

namespace {

void expect_all_caught(bool device) {
    CheckOptions o;
    o.mutants = true;
    o.device = device;
    const auto rs = run_check(o, {});
    size_t judged = 0;
    for (const MutantTally& m : mutant_summary(rs)) {
        const bool ran = m.caught + m.missed + m.wrong > 0;
        if (!ran) continue;
        ++judged;
        EXPECT_TRUE(m.passed()) << m.name << " expected " << m.expect << ": caught " << m.caught << ", wrong class "
                                << m.wrong << ", missed " << m.missed;
        std::printf("mutant %-40s %-16s caught in %zu cases (wrong class %zu, missed %zu)\n", m.name.c_str(),
                    m.expect.c_str(), m.caught, m.wrong, m.missed);
    }
    EXPECT_GT(judged, 0u) << "no mutant ran";
    for (const Result& r : rs)
        if (!r.passed()) {
            print_result(stdout, r);
            break;
        }
}

}  // namespace

TEST(Mutants, HostModelMutantsFailTheirGoldens) { expect_all_caught(false); }

// A kernel mutant without a model of its own is held to the bytes of the variant it imitates.
TEST(Mutants, KernelMutantsUseTheImitatedVariantsModel) {
    size_t checked = 0;
    for (const FamilySpec* f : families())
        for (const VariantSpec& v : f->variants) {
            if (v.mutant && v.model) {
                EXPECT_EQ(v.expect, "golden_mismatch") << "a host mutant is caught by its goldens: " << v.name;
            }
            if (!v.mutant || v.model) continue;
#if defined(BITGATE_HAVE_CUDA)
            EXPECT_TRUE(v.launch) << "kernel mutant without a kernel: " << v.name;
#endif
            const VariantSpec& real = variant(*f, v.golden_as);
            EXPECT_FALSE(real.mutant) << v.name;
            EXPECT_EQ(&model_of(*f, v), &model_of(*f, real)) << f->name << "/" << v.name;
            ++checked;
        }
    EXPECT_GT(checked, 0u);
}

TEST(MutantsDevice, KernelMutantsAreCaughtWithTheirClass) {
    BITGATE_REQUIRE_GPU();
    expect_all_caught(true);
}
