// ci/device runs the device tests by suite name (--gtest_filter='*Device.*'): a test that needs a
// GPU in a suite named otherwise would never run on the device machine, and pass nowhere. This
// reads the test sources and holds every test that asks for a GPU to that naming.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct Found {
    std::vector<std::string> misnamed;  // "file: Suite.Name"
    size_t device_tests = 0;
};

// A test asks for a GPU when its body calls BITGATE_REQUIRE_GPU() or a macro of its file that
// wraps it (REQUIRE_WGMMA). Lines ending in a backslash belong to a #define and are skipped.
Found scan(const fs::path& dir) {
    static const std::regex test_line(R"(^\s*(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\))");
    static const std::regex require(R"(\b(BITGATE_REQUIRE_GPU|REQUIRE_WGMMA)\(\))");
    Found f;
    for (const auto& e : fs::directory_iterator(dir)) {
        const auto ext = e.path().extension();
        if (ext != ".cpp" && ext != ".cu") continue;
        std::ifstream in(e.path());
        std::string line, suite, name;
        bool counted = false;
        while (std::getline(in, line)) {
            std::smatch m;
            if (std::regex_search(line, m, test_line)) {
                suite = m[2], name = m[3], counted = false;
            }
            if (ends_with(line, "\\") || line.find("#define") != std::string::npos) continue;
            if (suite.empty() || counted || !std::regex_search(line, require)) continue;
            counted = true;
            // A probe suite runs only when a device test starts it (under a sanitizer, say).
            if (ends_with(suite, "Probe")) continue;
            ++f.device_tests;
            if (!ends_with(suite, "Device"))
                f.misnamed.push_back(e.path().filename().string() + ": " + suite + "." + name);
        }
    }
    return f;
}

}  // namespace

TEST(DeviceSuites, EveryTestThatNeedsAGpuIsInADeviceSuite) {
    const Found f = scan(fs::path(BITGATE_SOURCE_DIR) / "tests");
    EXPECT_GE(f.device_tests, 20u) << "the scan found too few device tests to be reading the sources";
    for (const std::string& m : f.misnamed) ADD_FAILURE() << m << " needs a GPU but its suite does not end in Device";
}

// The scan itself: a misnamed device test in a scratch source is found, a wrapped macro's #define
// is not taken for a test, and a probe is left alone.
TEST(DeviceSuites, TheScanFindsAMisnamedDeviceTest) {
    const fs::path dir = fs::path(testing::TempDir()) / "device_suites_scan";
    fs::create_directories(dir);
    // The macro's name is split here so that this file's own scan does not take it for a call.
    const std::string gpu = std::string("BITGATE_REQUIRE_") + "GPU();";
    std::ofstream(dir / "x_test.cpp") << "#define REQUIRE_X() \\\n    " << gpu << " \\\n\n"
                                      << "TEST(XDevice, Good) {\n    " << gpu << "\n}\n"
                                      << "TEST(XHost, Bad) {\n  int a = 0;\n  " << gpu << "\n}\n"
                                      << "TEST(XRaceProbe, Launch) {\n    " << gpu << "\n}\n"
                                      << "TEST(XPlain, NoGpu) { EXPECT_TRUE(true); }\n";
    const Found f = scan(dir);
    fs::remove_all(dir);
    EXPECT_EQ(f.device_tests, 2u);
    ASSERT_EQ(f.misnamed.size(), 1u);
    EXPECT_EQ(f.misnamed[0], "x_test.cpp: XHost.Bad");
}
