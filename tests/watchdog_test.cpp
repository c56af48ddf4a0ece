// The watchdog that stops a run whose device case hangs (harness/watchdog.hpp). Each case runs
// in a child process (a death test): the watchdog ends its whole process when it fires.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "errors.hpp"
#include "gpu.hpp"
#include "watchdog.hpp"

namespace bitgate {

#if defined(BITGATE_HAVE_CUDA)
// A kernel that spins for ever (tests/watchdog_device.cu), waited on by the host.
void spin_on_device_for_ever();
#endif

namespace {

using namespace std::chrono_literals;

class WatchdogTest : public ::testing::Test {
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// In the death test's child: `times` watches named "<what> <i>" under one dog of `limit_s`, each
// held for `each`, then `after` with nothing watched, then exit 0 if the dog has not fired.
[[noreturn]] void watch_then_exit(double limit_s, const std::string& what, std::chrono::milliseconds each, int times,
                                  std::chrono::milliseconds after) {
    Watchdog dog(limit_s);
    for (int i = 0; i < times; ++i) {
        const auto watch = dog.watch(what + " " + std::to_string(i));
        std::this_thread::sleep_for(each);
    }
    std::this_thread::sleep_for(after);
    std::exit(0);
}

TEST_F(WatchdogTest, EndsTheProcessNamingTheCaseWithExitHang) {
    EXPECT_EXIT(watch_then_exit(0.2, "mmq_q8_0/wgmma n=1 N=8 K=32 (device)", 30s, 1, 0ms),
                ::testing::ExitedWithCode(exit_hang), "mmq_q8_0/wgmma n=1 N=8 K=32 \\(device\\) 0 did not finish within 0.2 s");
}

TEST_F(WatchdogTest, WorkThatEndsInTimeIsLeftAlone) {
    // 1.6 s of watched work in all, each watch well within its own 1 s (a loaded machine may
    // oversleep); then the limit passes with nothing watched.
    EXPECT_EXIT(watch_then_exit(1.0, "case", 400ms, 4, 1500ms), ::testing::ExitedWithCode(0), "");
}

TEST_F(WatchdogTest, ZeroMeansNever) {
    EXPECT_EXIT(watch_then_exit(0, "slow case", 300ms, 1, 0ms), ::testing::ExitedWithCode(0), "");
}

TEST(WatchdogMessage, OneLineWithTheCaseTheLimitAndTheExitCode) {
    EXPECT_EQ(hang_message("proj_q8_0/v2 n=8\nk=32", 2.5),
              "bitgate: proj_q8_0/v2 n=8\\nk=32 did not finish within 2.5 s (--case-timeout): a hang, a kernel that "
              "never ends; stopping with exit 5");
}

#if defined(BITGATE_HAVE_CUDA)
TEST(WatchdogDevice, StopsAProcessWaitingOnAKernelThatNeverEnds) {
    BITGATE_REQUIRE_GPU();
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts CUDA afresh
    EXPECT_EXIT(
        {
            Watchdog dog(2);
            const auto watch = dog.watch("spin (device)");
            spin_on_device_for_ever();
            std::exit(0);
        },
        ::testing::ExitedWithCode(exit_hang), "spin \\(device\\) did not finish within 2 s");
}
#endif

}  // namespace
}  // namespace bitgate
