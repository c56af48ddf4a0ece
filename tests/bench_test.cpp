// bench: the rotation and graph sizing, the figures, the report's labels and JSON (host); and
// on a GPU, that a call the graph cannot hold is reported as such, never timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "bench.hpp"
#include "gpu.hpp"

using namespace bitgate;

namespace {
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kL2 = 50 * kMiB;  // the H200's L2 by its datasheet
}  // namespace

TEST(BenchPlan, RotationAimsAtFourTimesL2) {
    // 1 MiB sets: 200 copies are 200 MiB = 4 x 50 MiB.
    Rotation r = plan_rotation(kMiB, kL2, size_t(1) << 40);
    EXPECT_EQ(r.copies, 200);
    EXPECT_EQ(r.bytes, 200 * kMiB);
    EXPECT_TRUE(r.beyond_l2);
    // 100 MB sets: 209715200 / 1e8 = 2.097..., so 3 copies.
    r = plan_rotation(100000000, kL2, size_t(1) << 40);
    EXPECT_EQ(r.copies, 3);
    EXPECT_TRUE(r.beyond_l2);
    // 36 KiB sets want 5689 copies; 4096 of them hold 144 MiB, still over 2 x L2.
    r = plan_rotation(36 * 1024, kL2, size_t(1) << 40);
    EXPECT_EQ(r.copies, kMaxCopies);
    EXPECT_EQ(r.bytes, size_t(4096) * 36 * 1024);
    EXPECT_TRUE(r.beyond_l2);
    // 16 KiB sets: 4096 copies hold 64 MiB, under 100 MiB: not counted as DRAM reads.
    r = plan_rotation(16 * 1024, kL2, size_t(1) << 40);
    EXPECT_EQ(r.copies, kMaxCopies);
    EXPECT_FALSE(r.beyond_l2);
}

TEST(BenchPlan, RotationStaysWithinTheMemoryBudget) {
    // 1 GiB sets with 1.5 GiB to spend: one copy, which alone is 20 x L2.
    Rotation r = plan_rotation(size_t(1) << 30, kL2, size_t(3) << 29);
    EXPECT_EQ(r.copies, 1);
    EXPECT_TRUE(r.beyond_l2);
    // 1 MiB sets with 80 MiB to spend: 80 copies, 80 MiB, under 2 x L2.
    r = plan_rotation(kMiB, kL2, 80 * kMiB);
    EXPECT_EQ(r.copies, 80);
    EXPECT_FALSE(r.beyond_l2);
    // An unknown L2 (0) never counts as beyond it.
    EXPECT_FALSE(plan_rotation(kMiB, 0, size_t(1) << 40).beyond_l2);
}

TEST(BenchPlan, CallsPerGraphAreWholeTurnsOfTheRotation) {
    // 30 us calls: 2000 / 30 = 66.7, so 67 calls at least, rounded up to 23 turns of 3.
    EXPECT_EQ(calls_per_graph(3, 30, 1), 69);
    // A rotation longer than the target: one turn.
    EXPECT_EQ(calls_per_graph(200, 30, 1), 200);
    // 1 us calls in turns of 7: 2001 calls at least, 286 turns = 2002.
    EXPECT_EQ(calls_per_graph(7, 1, 4), 2002);
    // 0.5 us calls of 8 launches: 4001 wanted, the node bound allows 16384 / 8 = 2048 calls.
    EXPECT_EQ(calls_per_graph(2, 0.5, 8), 2048);
    EXPECT_EQ(calls_per_graph(3, 0.5, 8), 2046);
    // One turn over the node bound: no graph.
    EXPECT_EQ(calls_per_graph(4096, 10, 8), 0);
    EXPECT_EQ(calls_per_graph(2, 10, 0), 0);
    for (int copies : {1, 2, 5, 64, 999})
        for (double us : {0.3, 4.0, 77.0, 5000.0})
            for (int launches : {1, 2, 8}) {
                const int c = calls_per_graph(copies, us, launches);
                ASSERT_GT(c, 0);
                EXPECT_EQ(c % copies, 0) << copies << " " << us << " " << launches;
                EXPECT_LE(c * launches, kMaxGraphNodes);
                EXPECT_GE(double(c) * us, std::min(kReplayTargetUs, double(kMaxGraphNodes / launches - copies) * us));
            }
}

TEST(BenchPlan, BlockerNamesWhy) {
    EXPECT_EQ(back_to_back_blocker(plan_rotation(kMiB, kL2, size_t(1) << 40), kL2, 1), "");
    const std::string small = back_to_back_blocker(plan_rotation(16 * 1024, kL2, size_t(1) << 40), kL2, 1);
    EXPECT_NE(small.find("4096 copies"), std::string::npos) << small;
    EXPECT_NE(small.find("64.0 MiB"), std::string::npos) << small;
    EXPECT_NE(small.find("100.0 MiB"), std::string::npos) << small;
    EXPECT_NE(small.find("L2"), std::string::npos) << small;
    EXPECT_NE(back_to_back_blocker(plan_rotation(36 * 1024, kL2, size_t(1) << 40), kL2, 8).find("graph nodes"), std::string::npos);
    EXPECT_EQ(back_to_back_blocker(plan_rotation(kMiB, kL2, size_t(1) << 40), kL2, 0), "the call launches no kernel");
}

TEST(BenchPlan, Figures) {
    // 400 MB in 100 us: 4000 GB/s, 80% of a 5000 GB/s ceiling; 2e9 operations: 2e13 per second.
    const Figures f = figures(100, 400e6, 2e9, 5000);
    EXPECT_DOUBLE_EQ(f.gbps, 4000);
    EXPECT_DOUBLE_EQ(f.pct_ceiling, 80);
    EXPECT_DOUBLE_EQ(f.ops_rate, 2e13);
    EXPECT_EQ(figures(0, 400e6, 2e9, 5000).gbps, 0);
}

namespace {

std::vector<BenchRow> sample_rows() {
    BenchRow a{.family = "proj_q8_0", .variant = "hoisted", .shape = "n=12288 k=7168 g=1", .bytes = 93.6e6,
               .launches = 1, .prepare_launches = 1, .rotation = 3, .rotation_bytes = 280800768};
    a.isolated = {.available = true, .median_us = 31.7, .p10_us = 31.5, .p90_us = 32.0, .fig = figures(31.7, 93.6e6, 0, 4454),
                  .samples = 2000};
    a.back_to_back = {.available = true, .median_us = 24.0, .p10_us = 23.9, .p90_us = 24.2,
                      .fig = figures(24.0, 93.6e6, 0, 4454), .samples = 150, .calls = 84};
    BenchRow b{.family = "embed", .variant = "q8_0", .shape = "n=1 d=896", .bytes = 4000, .launches = 1, .rotation = 64};
    b.isolated = {.available = true, .median_us = 3.0, .fig = figures(3.0, 4000, 0, 4454), .samples = 100};
    b.back_to_back.why = "the call cannot be captured in a CUDA graph: cudaErrorStreamCaptureUnsupported";
    return {a, b};
}

}  // namespace

TEST(BenchReport, TableLabelsBothTimingsAndSaysWhyOneIsMissing) {
    const std::string t = bench_table({.name = "H200", .read_ceiling_gbps = 4454, .l2_bytes = 60 * kMiB}, sample_rows());
    EXPECT_NE(t.find("isolated (one call)"), std::string::npos) << t;
    EXPECT_NE(t.find("back-to-back (graph replay)"), std::string::npos) << t;
    EXPECT_NE(t.find("read ceiling"), std::string::npos);
    EXPECT_NE(t.find("L2 60.0 MiB"), std::string::npos) << t;
    // 93.6e6 B in 31.7 us = 2952.7 GB/s = 66.3% of 4454; in 24.0 us = 3900.0 GB/s = 87.6%.
    EXPECT_NE(t.find("31.70"), std::string::npos) << t;
    EXPECT_NE(t.find("2952.7"), std::string::npos) << t;
    EXPECT_NE(t.find("66.3%"), std::string::npos) << t;
    EXPECT_NE(t.find("3900.0"), std::string::npos) << t;
    EXPECT_NE(t.find("87.6%"), std::string::npos) << t;
    EXPECT_NE(t.find("1+1p"), std::string::npos);
    EXPECT_NE(t.find("n/a"), std::string::npos);
    EXPECT_NE(t.find("back-to-back n/a: embed q8_0 n=1 d=896: the call cannot be captured in a CUDA graph"), std::string::npos) << t;
}

TEST(BenchReport, JsonNestsBothTimings) {
    const auto j = nlohmann::json::parse(bench_json({.name = "H200", .read_ceiling_gbps = 4454, .l2_bytes = 60 * kMiB}, sample_rows()));
    EXPECT_EQ(j["device"], "H200");
    EXPECT_EQ(j["l2_bytes"], 60 * kMiB);
    ASSERT_EQ(j["rows"].size(), 2u);
    const auto& a = j["rows"][0];
    EXPECT_EQ(a["rotation"], 3);
    EXPECT_EQ(a["rotation_bytes"], 280800768);
    EXPECT_EQ(a["isolated"]["available"], true);
    EXPECT_DOUBLE_EQ(a["isolated"]["median_us"].get<double>(), 31.7);
    EXPECT_EQ(a["isolated"]["iters"], 2000);
    EXPECT_DOUBLE_EQ(a["back_to_back"]["median_us"].get<double>(), 24.0);
    EXPECT_NEAR(a["back_to_back"]["gbps"].get<double>(), 3900.0, 1e-9);
    EXPECT_NEAR(a["back_to_back"]["pct_ceiling"].get<double>(), 100.0 * 3900.0 / 4454, 1e-9);
    EXPECT_EQ(a["back_to_back"]["calls_per_replay"], 84);
    EXPECT_EQ(a["back_to_back"]["replays"], 150);
    const auto& b = j["rows"][1];
    EXPECT_EQ(b["back_to_back"]["available"], false);
    EXPECT_FALSE(b["back_to_back"].contains("median_us"));
    EXPECT_NE(b["back_to_back"]["reason"].get<std::string>().find("cannot be captured"), std::string::npos);
}

#if defined(BITGATE_HAVE_CUDA)
std::string bench_capture_probe(int mode);

TEST(BenchDevice, CapturesASoundCallAndRefusesWhatAGraphCannotHold) {
    BITGATE_REQUIRE_GPU();
    EXPECT_EQ(bench_capture_probe(0), "");
    const char* what[] = {"", "waits for its stream", "launches on the legacy stream", "copies to the host",
                          "launches on another stream", "throws", "miscounts its launches"};
    for (int mode = 1; mode <= 6; ++mode) {
        const std::string why = bench_capture_probe(mode);
        EXPECT_NE(why, "") << "a launcher that " << what[mode] << " was captured";
        EXPECT_EQ(why.find("probe threw"), std::string::npos) << why;
        EXPECT_EQ(bench_capture_probe(0), "") << "after a launcher that " << what[mode] << ": " << why;
    }
    EXPECT_NE(bench_capture_probe(5).find("probe: bad input"), std::string::npos);
    EXPECT_NE(bench_capture_probe(4).find("the graph holds 0 kernels"), std::string::npos) << bench_capture_probe(4);
}
#else
TEST(BenchDevice, CapturesASoundCallAndRefusesWhatAGraphCannotHold) { BITGATE_REQUIRE_GPU(); }
#endif
