// Pictures (harness/plot.hpp, harness/bench_plot.hpp, spkl/spkl_plot.hpp): what is drawn from a
// given input, checked in the SVG itself (well-formed by an outside parser, xmllint; the labels and
// series names it must show), and the one-line error when gnuplot is missing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bench.hpp"
#include "bench_plot.hpp"
#include "errors.hpp"
#include "plot.hpp"
#include "spkl_plot.hpp"

using namespace bitgate;
namespace fs = std::filesystem;

namespace {

const std::string kBitgate = std::string(BITGATE_BINARY_DIR) + "/bitgate";

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

struct CliRun {
    int rc = -1;
    std::string out, err;
};

class PlotTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("bitgate_plot_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }

    // `env` goes before the command (PATH=... to hide gnuplot); CI is unset so that no progress
    // setting of the caller's matters.
    CliRun run(const std::string& args, const std::string& env = "") const {
        const std::string cmd = "env -u CI " + env + " '" + kBitgate + "' " + args + " >'" + path("stdout") + "' 2>'" +
                                path("stderr") + "'";
        const int st = std::system(cmd.c_str());
        return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(path("stdout")), slurp(path("stderr"))};
    }

    // Skips without gnuplot, except under CI, where ci/setup installs it and its absence is a failure.
    void need_tools() {
        const char* ci = std::getenv("CI");
        const bool have = !plot::find_gnuplot().empty() && std::system("xmllint --version >/dev/null 2>&1") == 0;
        if (!have && ci && *ci) FAIL() << "gnuplot or xmllint missing under CI (ci/setup installs gnuplot-nox and libxml2-utils)";
        if (!have) GTEST_SKIP() << "gnuplot (gnuplot-nox) or xmllint (libxml2-utils) is not installed";
    }

    // The SVG's text nodes, as xmllint reads them: it also proves the file well-formed XML.
    std::set<std::string> svg_texts(const std::string& svg) const {
        EXPECT_EQ(std::system(("xmllint --noout '" + svg + "'").c_str()), 0) << svg << " is not well-formed XML";
        const std::string list = path("texts");
        std::system(("xmllint --xpath \"//*[local-name()='text']/text()\" '" + svg + "' >'" + list + "'").c_str());
        std::set<std::string> texts;
        std::istringstream s(slurp(list));
        for (std::string l; std::getline(s, l);) {
            const auto a = l.find_first_not_of(' ');
            if (a != std::string::npos) texts.insert(l.substr(a));
        }
        return texts;
    }

    fs::path dir_;
};

// A bench JSON as `bitgate bench --json` writes it (one timing per row), with round numbers.
const char* kFlatBench = R"({"device": "Test GPU", "read_ceiling_gbps": 4000, "rows": [
 {"family": "proj_q8_0", "variant": "v1", "shape": "n=12288 k=7168 g=1", "median_us": 80, "bytes": 1e8,
  "gbps": 1250, "pct_ceiling": 31.25, "ops": 0, "ops_per_s": 0, "ops_unit": ""},
 {"family": "proj_q8_0", "variant": "hoisted", "shape": "n=12288 k=7168 g=1", "median_us": 40, "bytes": 1e8,
  "gbps": 2500, "pct_ceiling": 62.5, "ops": 0, "ops_per_s": 0, "ops_unit": ""},
 {"family": "mmq_q8_0", "variant": "mma", "shape": "N=3584 K=3584 n=512", "median_us": 100, "bytes": 2e7,
  "gbps": 200, "pct_ceiling": 5, "ops": 1e10, "ops_per_s": 1e14, "ops_unit": "TOPS"}
]})";

double point(const BenchPicture& p, const std::string& category, const std::string& series) {
    for (const auto& pt : p.points)
        if (p.categories[pt.category] == category && p.series[pt.series] == series) return pt.pct;
    return NAN;
}

}  // namespace

// ---- what a bench picture holds, from numbers worked by hand ---------------------------------------

TEST_F(PlotTest, BenchPictureFromFlatRows) {
    const auto j = nlohmann::json::parse(kFlatBench);
    BenchPicture p = bench_picture(j, "b.json", {});
    EXPECT_EQ(p.device, "Test GPU");
    EXPECT_EQ(p.categories, (std::vector<std::string>{"proj_q8_0 n=12288 k=7168 g=1", "mmq_q8_0 N=3584 K=3584 n=512"}));
    EXPECT_EQ(p.series, (std::vector<std::string>{"v1", "hoisted", "mma"}));
    EXPECT_EQ(point(p, "proj_q8_0 n=12288 k=7168 g=1", "hoisted"), 62.5);
    EXPECT_EQ(point(p, "mmq_q8_0 N=3584 K=3584 n=512", "mma"), 5);  // of the read ceiling
    // With a compute peak of 200 TOPS: 1e14 ops/s is 50% of it.
    p = bench_picture(j, "b.json", {.compute_peaks = {"mmq_q8_0=200"}});
    EXPECT_DOUBLE_EQ(point(p, "mmq_q8_0 N=3584 K=3584 n=512", "mma"), 50);
    EXPECT_EQ(point(p, "proj_q8_0 n=12288 k=7168 g=1", "v1"), 31.25);  // other families keep the read ceiling
}

TEST_F(PlotTest, BenchPeerFiguresAsPercentOrTime) {
    // 1e8 bytes in 50 us is 2000 GB/s: 50% of 4000. 1e10 ops in 200 us is 50 TOPS: 25% of 200.
    write("peer.csv", "# family,shape,peer,value\n\n"
                      "proj_q8_0, n=12288 k=7168 g=1, llama.cpp MMVQ, 50us\n"
                      "proj_q8_0,n=12288 k=7168 g=1,other & co,12.5%\n"
                      "mmq_q8_0,N=3584 K=3584 n=512,llama.cpp MMQ,0.2ms\n"
                      "mmq_q8_0,N=896 K=896 n=512,llama.cpp MMQ,7%\n");
    const auto j = nlohmann::json::parse(kFlatBench);
    const BenchPicture p = bench_picture(j, "b.json", {.peer = path("peer.csv"), .compute_peaks = {"mmq_q8_0=200"}});
    EXPECT_DOUBLE_EQ(point(p, "proj_q8_0 n=12288 k=7168 g=1", "llama.cpp MMVQ"), 50);
    EXPECT_DOUBLE_EQ(point(p, "proj_q8_0 n=12288 k=7168 g=1", "other & co"), 12.5);
    EXPECT_DOUBLE_EQ(point(p, "mmq_q8_0 N=3584 K=3584 n=512", "llama.cpp MMQ"), 25);
    EXPECT_EQ(point(p, "mmq_q8_0 N=896 K=896 n=512", "llama.cpp MMQ"), 7);  // a shape of the peer's alone
    EXPECT_EQ(p.categories.size(), 3u);
    EXPECT_EQ(p.series.size(), 6u);
    EXPECT_TRUE(p.peer_series[3] && p.peer_series[4] && p.peer_series[5]);
}

TEST_F(PlotTest, BenchPictureFromTwoTimings) {
    // Rows with `isolated` and `back_to_back`: each its own series; an unavailable one is left out.
    const auto j = nlohmann::json::parse(R"({"device": "D", "read_ceiling_gbps": 4000, "rows": [
      {"family": "proj_q8_0", "variant": "v2", "shape": "n=96 k=7168 g=1", "bytes": 1e6,
       "isolated": {"available": true, "median_us": 10, "pct_ceiling": 2.5},
       "back_to_back": {"available": true, "median_us": 5, "pct_ceiling": 5}},
      {"family": "proj_q8_0", "variant": "v1", "shape": "n=96 k=7168 g=1", "bytes": 1e6,
       "isolated": {"available": true, "median_us": 20, "pct_ceiling": 1.25},
       "back_to_back": {"available": false, "reason": "a host wait inside the call"}}]})");
    const BenchPicture p = bench_picture(j, "b.json", {});
    EXPECT_EQ(p.series, (std::vector<std::string>{"v2", "v2 back-to-back", "v1"}));
    EXPECT_EQ(point(p, "proj_q8_0 n=96 k=7168 g=1", "v2 back-to-back"), 5);
    EXPECT_TRUE(std::isnan(point(p, "proj_q8_0 n=96 k=7168 g=1", "v1 back-to-back")));
}

TEST_F(PlotTest, BenchPictureReadsWhatTheBenchWrites) {
    // Rows made by the bench's own JSON writer (bench_json): both timings, one unavailable.
    BenchRow a{.family = "proj_q8_0", .variant = "hoisted", .shape = "n=12288 k=7168 g=1", .bytes = 93.6e6, .launches = 1};
    a.isolated = {.available = true, .median_us = 31.7, .fig = figures(31.7, 93.6e6, 0, 4454), .samples = 2000};
    a.back_to_back = {.available = true, .median_us = 24.0, .fig = figures(24.0, 93.6e6, 0, 4454), .samples = 150, .calls = 84};
    BenchRow b{.family = "embed", .variant = "q8_0", .shape = "n=1 d=896", .bytes = 4000, .launches = 1};
    b.isolated = {.available = true, .median_us = 3.0, .fig = figures(3.0, 4000, 0, 4454), .samples = 100};
    b.back_to_back.why = "the call cannot be captured in a CUDA graph";
    const auto j = nlohmann::json::parse(bench_json({.name = "H200", .read_ceiling_gbps = 4454}, {a, b}));
    write("peer.csv", "proj_q8_0,n=12288 k=7168 g=1,peer,46.8us\n");
    const BenchPicture p = bench_picture(j, "b.json", {.peer = path("peer.csv")});
    EXPECT_EQ(p.device, "H200");
    EXPECT_EQ(p.series, (std::vector<std::string>{"hoisted", "hoisted back-to-back", "q8_0", "peer"}));
    // 93.6e6 B in 31.7 us is 2952.7 GB/s, 66.29% of 4454; in 24.0 us 3900 GB/s, 87.56%; in 46.8 us 2000 GB/s, 44.90%.
    EXPECT_NEAR(point(p, "proj_q8_0 n=12288 k=7168 g=1", "hoisted"), 66.29, 0.01);
    EXPECT_NEAR(point(p, "proj_q8_0 n=12288 k=7168 g=1", "hoisted back-to-back"), 87.56, 0.01);
    EXPECT_NEAR(point(p, "proj_q8_0 n=12288 k=7168 g=1", "peer"), 44.90, 0.01);
    EXPECT_NEAR(point(p, "embed n=1 d=896", "q8_0"), 4000 / 3e-6 / 1e9 / 4454 * 100, 1e-9);
    EXPECT_TRUE(std::isnan(point(p, "embed n=1 d=896", "q8_0 back-to-back")));
}

TEST_F(PlotTest, BenchBadInputIsOneLineNamingTheFile) {
    const auto j = nlohmann::json::parse(kFlatBench);
    write("bad.csv", "proj_q8_0,n=12288 k=7168 g=1,peer,fast\n");
    try {
        bench_picture(j, "b.json", {.peer = path("bad.csv")});
        FAIL() << "accepted";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()).find(path("bad.csv") + ":1: value 'fast'"), 0u) << e.what();
    }
    write("short.csv", "proj_q8_0,n=1 k=2,peer\n");
    EXPECT_THROW(bench_picture(j, "b.json", {.peer = path("short.csv")}), BadInput);
    write("unmatched.csv", "proj_q8_0,n=1 k=2 g=1,peer,3us\n");  // a time with no row to convert it
    EXPECT_THROW(bench_picture(j, "b.json", {.peer = path("unmatched.csv")}), BadInput);
    EXPECT_THROW(bench_picture(nlohmann::json::parse(R"({"rows": 3})"), "b.json", {}), BadInput);
    EXPECT_THROW(bench_picture(j, "b.json", {.compute_peaks = {"mmq_q8_0"}}), BadInput);
    EXPECT_THROW(bench_picture(j, "b.json", {.compute_peaks = {"rope=5"}}), BadInput);  // no such row
}

// ---- the SVG through the CLI ------------------------------------------------------------------------

TEST_F(PlotTest, BenchPlotDrawsLabelsAndSeries) {
    need_tools();
    write("b.json", kFlatBench);
    write("peer.csv", "mmq_q8_0,N=3584 K=3584 n=512,llama.cpp MMQ,0.2ms\nproj_q8_0,n=12288 k=7168 g=1,a & b <c>,40%\n");
    const CliRun r = run("bench plot '" + path("b.json") + "' --out '" + path("b.svg") + "' --peer '" + path("peer.csv") +
                      "' --compute-peak mmq_q8_0=200");
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto t = svg_texts(path("b.svg"));
    for (const char* want : {"proj_q8_0 n=12288 k=7168 g=1", "mmq_q8_0 N=3584 K=3584 n=512 *", "v1", "hoisted", "mma",
                             "llama.cpp MMQ", "a &amp; b &lt;c&gt;", "% of the read ceiling (4000 GB/s, measured in the same run); * % of the compute peak: mmq_q8_0 200 TOPS"})
        EXPECT_TRUE(t.count(want)) << "no text '" << want << "' in the SVG";
    EXPECT_TRUE(t.count("bitgate bench, Test GPU: share of the ceiling per shape and variant"));
    EXPECT_FALSE(t.count("mmq_q8_0 N=3584 K=3584 n=512")) << "the compute-peak family is marked";
}

TEST_F(PlotTest, BenchPlotBadJsonIsExit2) {
    need_tools();
    write("b.json", "{\"rows\": [");
    const CliRun r = run("bench plot '" + path("b.json") + "' --out '" + path("b.svg") + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(path("b.json") + ": not JSON"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("b.svg")));
}

TEST_F(PlotTest, SpklDiffPlotDrawsLineAndHistogram) {
    need_tools();
    ASSERT_EQ(run("spkl synth '" + path("a.spkl") + "' --vocab 64 --rows 50").rc, 0);
    ASSERT_EQ(run("spkl synth '" + path("b.spkl") + "' --vocab 64 --rows 50 --noise 0.5").rc, 0);
    const CliRun r = run("spkl diff '" + path("a.spkl") + "' '" + path("b.spkl") + "' --plot '" + path("d.svg") + "'");
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "") << "stderr is not a terminal: no progress line";
    const auto t = svg_texts(path("d.svg"));
    for (const char* want : {"KLD per position", "rows per bin", "KLD histogram (50 rows, 5 bins per decade)",
                             "position (row)", "rows (log scale)"})
        EXPECT_TRUE(t.count(want)) << "no text '" << want << "' in the SVG";
}

TEST_F(PlotTest, SpklDiffPlotOfManyRowsDrawsMeanAndMax) {
    need_tools();
    // 5000 rows: one point per ceil(5000 / 2000) = 3 positions.
    ASSERT_EQ(run("spkl synth '" + path("a.spkl") + "' --vocab 8 --rows 5000").rc, 0);
    ASSERT_EQ(run("spkl synth '" + path("b.spkl") + "' --vocab 8 --rows 5000 --noise 0.5").rc, 0);
    ASSERT_EQ(run("spkl kld '" + path("a.spkl") + "' '" + path("b.spkl") + "' --plot '" + path("d.svg") + "'").rc, 0);
    const auto t = svg_texts(path("d.svg"));
    EXPECT_TRUE(t.count("mean KLD per 3 positions"));
    EXPECT_TRUE(t.count("max KLD per 3 positions"));
    EXPECT_FALSE(t.count("KLD per position"));
}

TEST_F(PlotTest, SpklDiffPlotOfIdenticalFiles) {
    need_tools();
    ASSERT_EQ(run("spkl synth '" + path("a.spkl") + "' --vocab 16 --rows 20").rc, 0);
    ASSERT_EQ(run("spkl diff '" + path("a.spkl") + "' '" + path("a.spkl") + "' --plot '" + path("d.svg") + "'").rc, 0);
    const auto t = svg_texts(path("d.svg"));
    EXPECT_TRUE(t.count("KLD histogram (20 rows, 5 bins per decade; 20 rows with KLD 0 not shown)"));
    EXPECT_TRUE(t.count("no row with a KLD above 0"));
}

TEST_F(PlotTest, MissingGnuplotIsOneLineAndExit2) {
    // PATH without gnuplot, whatever this machine has: the verbs stop before any work.
    write("b.json", kFlatBench);
    ASSERT_EQ(run("spkl synth '" + path("a.spkl") + "' --vocab 16 --rows 4").rc, 0);
    const std::string hide = "PATH=" + path("nothing");
    CliRun v = run("bench plot '" + path("b.json") + "' --out '" + path("x.svg") + "'", hide);
    EXPECT_EQ(v.rc, 2) << v.err;
    EXPECT_EQ(v.err, "bitgate: error: bench plot needs gnuplot (Debian package gnuplot-nox), which is not on PATH\n");
    EXPECT_FALSE(fs::exists(path("x.svg")));
    for (const std::string& args :
         {"bench --plot '" + path("x.svg") + "'",
          "spkl diff '" + path("a.spkl") + "' '" + path("a.spkl") + "' --plot '" + path("x.svg") + "'",
          "spkl kld '" + path("a.spkl") + "' '" + path("a.spkl") + "' --plot '" + path("x.svg") + "'"}) {
        const CliRun r = run(args, hide);
        EXPECT_EQ(r.rc, 2) << args << "\n" << r.err;
        EXPECT_EQ(r.err, "bitgate: error: --plot needs gnuplot (Debian package gnuplot-nox), which is not on PATH\n") << args;
        EXPECT_EQ(r.out, "") << args;
        EXPECT_FALSE(fs::exists(path("x.svg"))) << args;
    }
}

TEST_F(PlotTest, UnwritablePictureIsRefusedBeforeTheWork) {
    need_tools();
    ASSERT_EQ(run("spkl synth '" + path("a.spkl") + "' --vocab 16 --rows 4").rc, 0);
    const std::string out = path("no/such/dir/x.svg");
    const CliRun r = run("spkl diff '" + path("a.spkl") + "' '" + path("a.spkl") + "' --plot '" + out + "'");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.out, "") << "refused before the diff printed anything";
    EXPECT_EQ(r.err, "bitgate: error: --plot " + out + ": directory " + path("no/such/dir") + " does not exist\n");
    write("b.json", kFlatBench);
    const CliRun b = run("bench plot '" + path("b.json") + "' --out '" + out + "'");
    EXPECT_EQ(b.rc, 2);
    EXPECT_EQ(b.err, "bitgate: error: --out " + out + ": directory " + path("no/such/dir") + " does not exist\n");
}

TEST_F(PlotTest, GnuplotFailureIsOneLineAndNoPicture) {
    // A gnuplot that fails as a real one does on a script error: its last words end the message.
    fs::create_directories(path("bin"));
    write("bin/gnuplot", "#!/bin/sh\necho 'gnuplot: warming up' >&2\necho '         line 7: undefined variable: x' >&2\nexit 1\n");
    fs::permissions(path("bin/gnuplot"), fs::perms::owner_all);
    write("b.json", kFlatBench);
    const CliRun r = run("bench plot '" + path("b.json") + "' --out '" + path("x.svg") + "'", "PATH=" + path("bin") + ":/usr/bin:/bin");
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err, "bitgate: error: --plot: gnuplot could not draw " + path("x.svg") + ": line 7: undefined variable: x\n");
    EXPECT_FALSE(fs::exists(path("x.svg")));
}

// ---- the histogram's bins ----------------------------------------------------------------------------

TEST(KldHistogram, CountsEveryPositiveValueInItsBin) {
    const std::vector<double> v = {1e-3, 2e-3, 5e-3, 0.0, -1e-18, NAN, INFINITY, 0.1, 0.15, 3e-6};
    const spkl::KldHistogram h = spkl::kld_histogram(v, 1);  // one bin per decade
    EXPECT_EQ(h.not_positive, 2u);
    EXPECT_EQ(h.nonfinite, 2u);
    ASSERT_EQ(h.counts.size() + 1, h.edges.size());
    uint64_t total = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
        total += h.counts[i];
        EXPECT_NEAR(h.edges[i + 1] / h.edges[i], 10.0, 1e-9);  // decades
    }
    EXPECT_EQ(total, 6u);
    EXPECT_LE(h.edges.front(), 3e-6);
    EXPECT_GT(h.edges.back(), 0.15);
    auto count_of = [&](double x) {
        for (size_t i = 0; i < h.counts.size(); ++i)
            if (h.edges[i] <= x && x < h.edges[i + 1]) return h.counts[i];
        return uint64_t{999};
    };
    EXPECT_EQ(count_of(2e-3), 3u);   // [1e-3, 1e-2): 1e-3, 2e-3, 5e-3
    EXPECT_EQ(count_of(0.12), 2u);   // [0.1, 1): 0.1, 0.15
    EXPECT_EQ(count_of(5e-6), 1u);   // [1e-6, 1e-5): 3e-6
    EXPECT_EQ(count_of(5e-5), 0u);
    EXPECT_TRUE(spkl::kld_histogram({0.0, NAN}).counts.empty());
}

TEST(KldHistogram, LineBucket) {
    EXPECT_EQ(spkl::kld_line_bucket(1), 1u);
    EXPECT_EQ(spkl::kld_line_bucket(4000), 1u);
    EXPECT_EQ(spkl::kld_line_bucket(4001), 3u);  // ceil(4001 / 2000)
    EXPECT_EQ(spkl::kld_line_bucket(6000), 3u);
    EXPECT_EQ(spkl::kld_line_bucket(6001), 4u);
}
