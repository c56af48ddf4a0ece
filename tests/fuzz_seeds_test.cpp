// The fuzz targets (fuzz/<reader>_fuzz.cpp) start from their seeds (fuzz/corpus/<reader>/):
// ci/sanitize copies that folder before each run, and a target without seeds only ever sees the
// driver's mutations of nothing. Each target needs seeds; each seed folder needs its target.
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace {

const fs::path kFuzz = fs::path(BITGATE_SOURCE_DIR) / "fuzz";

std::set<std::string> targets() {
    std::set<std::string> out;
    const std::string suffix = "_fuzz.cpp";
    for (const auto& e : fs::directory_iterator(kFuzz)) {
        const std::string name = e.path().filename().string();
        if (name.size() > suffix.size() && name.ends_with(suffix)) out.insert(name.substr(0, name.size() - suffix.size()));
    }
    return out;
}

}  // namespace

TEST(FuzzSeeds, EveryTargetHasSeeds) {
    const std::set<std::string> t = targets();
    ASSERT_GE(t.size(), 12u) << "fuzz targets missing from " << kFuzz;
    for (const std::string& reader : t) {
        const fs::path dir = kFuzz / "corpus" / reader;
        ASSERT_TRUE(fs::is_directory(dir)) << reader << "_fuzz.cpp has no seed folder " << dir;
        size_t seeds = 0;
        for (const auto& e : fs::directory_iterator(dir)) seeds += e.is_regular_file() && fs::file_size(e.path()) > 0;
        EXPECT_GE(seeds, 2u) << dir << ": a target needs at least two non-empty seeds";
    }
}

TEST(FuzzSeeds, EverySeedFolderHasATarget) {
    const std::set<std::string> t = targets();
    for (const auto& e : fs::directory_iterator(kFuzz / "corpus"))
        EXPECT_TRUE(t.count(e.path().filename().string())) << e.path() << " has no fuzz/" << e.path().filename().string()
                                                          << "_fuzz.cpp";
}
