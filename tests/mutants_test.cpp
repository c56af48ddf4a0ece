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

TEST(MutantsDevice, KernelMutantsAreCaughtWithTheirClass) {
    BITGATE_REQUIRE_GPU();
    expect_all_caught(true);
}
