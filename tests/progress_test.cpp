// The progress line (harness/progress.hpp): its text from given counts and times, silence when
// stderr is not a terminal, and the line a terminal sees.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "progress.hpp"

using namespace bitgate;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// Runs `body` with stderr sent to a file; returns what it wrote there.
template <class F>
std::string capture_stderr(F body) {
    const fs::path p = fs::temp_directory_path() / ("bitgate_progress_" + std::to_string(::getpid()));
    std::fflush(stderr);
    const int saved = ::dup(2);
    std::FILE* f = std::fopen(p.c_str(), "w");
    ::dup2(::fileno(f), 2);
    body();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(f);
    std::string s = slurp(p);
    fs::remove(p);
    return s;
}

}  // namespace

TEST(ProgressText, Durations) {
    EXPECT_EQ(duration_text(0), "0s");
    EXPECT_EQ(duration_text(59.4), "59s");
    EXPECT_EQ(duration_text(59.6), "1m00s");  // rounded to the second first
    EXPECT_EQ(duration_text(65), "1m05s");
    EXPECT_EQ(duration_text(3599), "59m59s");
    EXPECT_EQ(duration_text(3600), "1h00m");
    EXPECT_EQ(duration_text(2 * 3600 + 7 * 60 + 5), "2h07m");
    EXPECT_EQ(duration_text(-1), "--");
    EXPECT_EQ(duration_text(INFINITY), "--");
    EXPECT_EQ(duration_text(NAN), "--");
}

TEST(ProgressText, RateAndTimeLeft) {
    // Nothing done yet, or no time passed: no rate to speak of.
    EXPECT_EQ(progress_text(0, 100, 3.0, "rows"), "[0/100] 0% -- rows/s, -- left");
    EXPECT_EQ(progress_text(5, 100, 0.0, "rows"), "[5/100] 5% -- rows/s, -- left");
    // 25 in 5 s: 5 per second, 75 left: 15 s.
    EXPECT_EQ(progress_text(25, 100, 5.0, "cases"), "[25/100] 25% 5.00 cases/s, 15s left");
    // 1200 in 4 s: 300 per second; 3800 left: 12.67 s, shown as 13s.
    EXPECT_EQ(progress_text(1200, 5000, 4.0, "rows"), "[1200/5000] 24% 300 rows/s, 13s left");
    // 37 in 3 s: 12.33 per second, 3 significant figures; 83 left: 6.73 s.
    EXPECT_EQ(progress_text(37, 120, 3.0, "cases"), "[37/120] 30% 12.3 cases/s, 7s left");
    // Percent rounds down: 3 of 7 is 42.9%.
    EXPECT_EQ(progress_text(3, 7, 1.0, "rows"), "[3/7] 42% 3.00 rows/s, 1s left");
    // Slow work: 2 of 1000 in 10 s, 998 left at 0.2 per second: 4990 s = 1h23m.
    EXPECT_EQ(progress_text(2, 1000, 10.0, "cases"), "[2/1000] 0% 0.20 cases/s, 1h23m left");
    // Finished.
    EXPECT_EQ(progress_text(50, 50, 2.0, "rows"), "[50/50] 100% 25.0 rows/s, 0s left");
}

TEST(ProgressLine, SilentWhenStderrIsNotATerminal) {
    const std::string out = capture_stderr([] {
        EXPECT_FALSE(progress_wanted());  // stderr is a file now
        Progress p("rows");
        EXPECT_FALSE(p.on());
        p(1, 10, "first");
        p(10, 10, "last");
        p.clear();
    });
    EXPECT_EQ(out, "");
}

TEST(ProgressLine, DrawsAndErasesOneLineWhenOn) {
    const std::string out = capture_stderr([] {
        Progress p("rows", true);
        p(0, 10, "item a");
        p(3, 10, "item b");  // within 0.1 s of the first: skipped
        p(10, 10, "item c"); // the last step is always drawn
        p.clear();
        p.clear();  // nothing more: the line is already gone
    });
    EXPECT_EQ(out.find("\r\033[K[0/10] 0% -- rows/s, -- left  item a"), 0u) << out;
    EXPECT_EQ(out.find("item b"), std::string::npos) << out;
    EXPECT_NE(out.find("\r\033[K[10/10] 100% "), std::string::npos) << out;
    EXPECT_NE(out.find("item c\r\033[K"), std::string::npos) << out;
    EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
    EXPECT_EQ(out.find('\n'), std::string::npos) << "one updating line, never a new one";
}

TEST(ProgressLine, CiSetTurnsItOff) {
    // Even on a terminal, CI logs stay clean: progress_wanted() reads CI.
    const char* old = std::getenv("CI");
    const std::string saved = old ? old : "";
    ::setenv("CI", "true", 1);
    EXPECT_FALSE(progress_wanted());
    if (old) ::setenv("CI", saved.c_str(), 1);
    else ::unsetenv("CI");
}

// The terminal case end to end: `spkl diff` under script(1), which gives it a pseudo-terminal.
TEST(ProgressLine, SpklDiffOnATerminal) {
    if (std::system("script --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) (util-linux) is not installed";
    const fs::path dir = fs::temp_directory_path() / ("bitgate_progress_tty_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string bg = std::string(BITGATE_BINARY_DIR) + "/bitgate";
    const std::string a = (dir / "a.spkl").string(), b = (dir / "b.spkl").string();
    // 3000 rows of 4 KiB: three batches of 1024 rows (4 MiB a batch).
    ASSERT_EQ(std::system(("'" + bg + "' spkl synth '" + a + "' --vocab 1024 --rows 3000 >/dev/null").c_str()), 0);
    ASSERT_EQ(std::system(("'" + bg + "' spkl synth '" + b + "' --vocab 1024 --rows 3000 --noise 0.1 >/dev/null").c_str()), 0);
    const std::string typescript = (dir / "typescript").string();
    const std::string cmd = "env -u CI script -qec \"'" + bg + "' spkl diff '" + a + "' '" + b + "'\" '" + typescript +
                            "' >/dev/null 2>&1 </dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const std::string t = slurp(typescript);
    fs::remove_all(dir);
    // The first batch's line, the last one, each drawn over the line before, and erased before the results.
    EXPECT_NE(t.find("\r\033[K[1024/3000] 34% "), std::string::npos) << t;
    const auto last = t.find("\r\033[K[3000/3000] 100% ");
    ASSERT_NE(last, std::string::npos) << t;
    EXPECT_NE(t.find(" rows/s, 0s left", last), std::string::npos) << t;
    const auto results = t.find("files        : differ");
    ASSERT_NE(results, std::string::npos) << t;
    EXPECT_LT(last, results);
    EXPECT_NE(t.rfind("\r\033[K", results), std::string::npos);
}
