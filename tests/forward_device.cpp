// The forward pass on the GPU: the host's bytes for both paths, the measured kernel nodes equal
// to the prediction, and no byte depending on the SM count. Skipped without a GPU.
#include <gtest/gtest.h>

#include "forward.hpp"
#include "gpu.hpp"

namespace bitgate::model {
namespace {

SequenceResult run(const Model& m, const std::string& path, bool device, int sms, int64_t prompt, int64_t decode) {
    const auto toks = seeded_tokens(prompt + decode + 1, m.hp.n_vocab, 7);
    auto r = device ? make_device_runner(m, path, prompt + decode, DeviceOptions{sms})
                    : make_host_runner(m, path, prompt + decode);
    return run_sequence(m, *r, path, toks, prompt, decode);
}

TEST(ForwardDevice, DeviceGivesTheHostBytesAndThePredictedLaunches) {
    BITGATE_REQUIRE_GPU();
    const Model m = synth("tiny", 1);
    for (auto [prompt, decode] : {std::pair<int64_t, int64_t>{16, 4}, {126, 4}, {200, 2}}) {
        const std::string want = logits_md5(run(m, "fast", false, 0, prompt, decode));
        for (const char* path : {"baseline", "fast"}) {
            const SequenceResult d = run(m, path, true, 0, prompt, decode);
            EXPECT_EQ(logits_md5(d), want) << path << " prompt " << prompt << " decode " << decode;
            for (const CallStat& c : d.calls) {
                EXPECT_EQ(c.measured, c.predicted) << path << " pos " << c.pos << " n " << c.n;
                EXPECT_EQ(c.graph_steps, c.predicted);
            }
        }
    }
}

TEST(ForwardDevice, SmCountOverrideChangesNoByte) {
    BITGATE_REQUIRE_GPU();
    const Model m = synth("tiny", 1);
    const std::string want = logits_md5(run(m, "fast", true, 0, 130, 3));
    for (int sms : {1, 7, 33, 200})
        for (const char* path : {"baseline", "fast"})
            EXPECT_EQ(logits_md5(run(m, path, true, sms, 130, 3)), want) << path << " as if " << sms << " SMs";
}

}  // namespace
}  // namespace bitgate::model
