// The device gate's memcheck and initcheck shards report "0 errors"; these tests show that the
// tools, run as ci/device runs them (--error-exitcode 9), do report an error where there is one,
// and none on the same kernel without its defect (the control that ties the report to the
// defect). Each runs this binary again under the tool, with one probe (SanitizerProbe.Launch)
// selected; the probe only launches, and runs only when started that way. Racecheck has its own
// proof in ci/device (the race step, over a real kernel's mutant).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>

#include "gpu.hpp"

#if defined(BITGATE_HAVE_CUDA)
namespace bitgate::test {
// tests/sanitizer_probe_device.cu: "write_past_end", "uninitialized_read" or "sound".
std::string sanitizer_probe(const std::string& which);
}  // namespace bitgate::test
#endif

namespace {

constexpr const char* kProbeEnv = "BITGATE_SANITIZER_PROBE";

std::string sanitizer_path() {
    for (const char* p : {"compute-sanitizer", "/usr/local/cuda/bin/compute-sanitizer"})
        if (std::system((std::string("command -v ") + p + " >/dev/null 2>&1").c_str()) == 0) return p;
    return "";
}

// The tool's exit code (9: errors found) and its output, for one probe.
std::pair<int, std::string> run_probe(const std::string& sanitizer, const std::string& tool, const std::string& which) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string cmd = std::string(kProbeEnv) + "=" + which + " " + sanitizer + " --tool " + tool +
                            " --error-exitcode 9 '" + self + "' --gtest_filter=SanitizerProbe.Launch 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return {-1, "cannot start " + cmd};
    std::string text;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    const int st = pclose(p);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, text};
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// A defect the tool must report (exit 9, its message), and the sound control it must pass.
void expect_found(const std::string& tool, const std::string& defect, const std::string& message) {
    const std::string sanitizer = sanitizer_path();
    if (sanitizer.empty()) GTEST_SKIP() << "device test skipped: compute-sanitizer is not on PATH";
    const auto [bad_rc, bad] = run_probe(sanitizer, tool, defect);
    EXPECT_EQ(bad_rc, 9) << bad;
    EXPECT_TRUE(has(bad, message)) << bad;
    EXPECT_TRUE(has(bad, "sanitizer probe " + defect + " launched")) << "the probe did not run:\n" << bad;
    const auto [good_rc, good] = run_probe(sanitizer, tool, "sound");
    EXPECT_EQ(good_rc, 0) << good;
    EXPECT_TRUE(has(good, "ERROR SUMMARY: 0 errors")) << good;
    EXPECT_TRUE(has(good, "sanitizer probe sound launched: no CUDA error")) << "the control did not run:\n" << good;
    EXPECT_TRUE(has(good, "[  PASSED  ] 1 test")) << good;
}

}  // namespace

// The probe launches and says what came back; the test that started it judges. (Under memcheck
// a kernel whose access it reports is stopped, and the launch returns an error.)
TEST(SanitizerProbe, Launch) {
    const char* which = std::getenv(kProbeEnv);
    if (!which) GTEST_SKIP() << "a probe of the SanitizerDevice tests, started by them under compute-sanitizer";
    BITGATE_REQUIRE_GPU();
#if defined(BITGATE_HAVE_CUDA)
    const std::string err = bitgate::test::sanitizer_probe(which);
    std::printf("sanitizer probe %s launched: %s\n", which, err.empty() ? "no CUDA error" : err.c_str());
    if (std::string(which) == "sound") {
        EXPECT_EQ(err, "");
    }
#endif
}

TEST(SanitizerDevice, MemcheckReportsAWritePastTheEnd) {
    BITGATE_REQUIRE_GPU();
    expect_found("memcheck", "write_past_end", "Invalid __global__ write");
}

TEST(SanitizerDevice, InitcheckReportsAnUninitializedRead) {
    BITGATE_REQUIRE_GPU();
    expect_found("initcheck", "uninitialized_read", "Uninitialized __global__ memory read");
}
