// The watchdog that stops a run whose device case hangs (harness/watchdog.hpp). Each case runs
// in a child process (a death test): the watchdog ends its whole process when it fires.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
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

TEST_F(WatchdogTest, EndsTheProcessNamingTheCaseWithExitHang) {
    EXPECT_EXIT(
        {
            Watchdog dog(0.2);
            const auto watch = dog.watch("mmq_q8_0/wgmma n=1 N=8 K=32 seed=1 profile=uniform (device)");
            std::this_thread::sleep_for(30s);
            std::exit(0);
        },
        ::testing::ExitedWithCode(exit_hang),
        "mmq_q8_0/wgmma n=1 N=8 K=32 seed=1 profile=uniform \\(device\\) did not finish within 0.2 s");
}

TEST_F(WatchdogTest, WorkThatEndsInTimeIsLeftAlone) {
    EXPECT_EXIT(
        {
            Watchdog dog(0.3);
            for (int i = 0; i < 4; ++i) {  // 0.8 s in all: each watch has its own 0.3 s
                const auto watch = dog.watch("case " + std::to_string(i));
                std::this_thread::sleep_for(200ms);
            }
            std::this_thread::sleep_for(500ms);  // disarmed: the limit passes with nothing watched
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST_F(WatchdogTest, ZeroMeansNever) {
    EXPECT_EXIT(
        {
            Watchdog dog(0);
            const auto watch = dog.watch("slow case");
            std::this_thread::sleep_for(300ms);
            std::exit(0);
        },
        ::testing::ExitedWithCode(0), "");
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
