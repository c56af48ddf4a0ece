// The registry holds together: every registered name is a declared family, every variant's
// launcher and preparation belong to a variant by construction (they are its fields), and where
// the kernels are built every real variant has a launcher.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bitgate/spec.hpp"
#include "registry.hpp"

using namespace bitgate;

TEST(Registry, EveryRegisteredNameIsADeclaredFamily) {
    // A mutant registered under a misspelled family creates an undeclared entry: caught here.
    for (const auto& [name, f] : registry()) EXPECT_TRUE(f.declared()) << "'" << name << "' is named but never declared";
}

TEST(Registry, VariantNamesAreUniqueAndPreparationsHaveALaunch) {
    for (const FamilySpec* f : families()) {
        for (size_t i = 0; i < f->variants.size(); ++i) {
            const VariantSpec& v = f->variants[i];
            for (size_t j = i + 1; j < f->variants.size(); ++j)
                EXPECT_NE(v.name, f->variants[j].name) << f->name << " declares " << v.name << " twice";
            EXPECT_TRUE(!v.prepare || v.launch) << f->name << "/" << v.name << " has a preparation but no launcher";
            EXPECT_TRUE(v.model || (v.mutant && !v.golden_as.empty()))
                << f->name << "/" << v.name << " has no host model";
        }
    }
}

TEST(Registry, EveryRealVariantHasALauncherWhereCudaIsBuilt) {
#if defined(BITGATE_HAVE_CUDA)
    for (const FamilySpec* f : families())
        for (const VariantSpec& v : f->variants)
            if (!v.mutant || !v.model) {
#if !defined(BITGATE_HAVE_SM90A)
                // Compiled for sm_90a only (cmake/sm90a.cmake): a build for other devices lacks it.
                if (f->name.starts_with("mmq_q8_0") && v.name.starts_with("wgmma")) continue;
#endif
                EXPECT_TRUE(v.launch) << f->name << "/" << v.name << " has no device launcher";
            }
#else
    for (const FamilySpec* f : families())
        for (const VariantSpec& v : f->variants)
            EXPECT_FALSE(v.launch) << f->name << "/" << v.name << ": a launcher in a host-only build";
    GTEST_SKIP() << "host-only build: launchers are not compiled; checked that none is registered";
#endif
}

TEST(Registry, AskingForAnUndeclaredDimensionOrTensorThrows) {
    const FamilySpec& f = family("proj_q8_0");
    const Shape s = parse_shape(f, {"n=4", "k=64", "g=1"}, "test");
    EXPECT_EQ(s["k"], 64);
    try {
        (void)s["K"];
        FAIL() << "no throw";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("proj_q8_0 has no dimension 'K'"), std::string::npos) << e.what();
    }
    HostIo io{.family = &f};
    try {
        (void)io.input<float>("y");  // y is declared, but as an output
        FAIL() << "no throw";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("proj_q8_0 declares no input tensor 'y'"), std::string::npos) << e.what();
    }
}
