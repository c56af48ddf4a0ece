#include "watchdog.hpp"

#include <cstdio>
#include <cstdlib>

#include "errors.hpp"

namespace bitgate {

std::string hang_message(const std::string& what, double seconds) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", seconds);
    return "bitgate: " + printable(what) + " did not finish within " + limit +
           " s (--case-timeout): a hang, a kernel that never ends; stopping with exit " + std::to_string(int(exit_hang));
}

Watchdog::Watchdog(double seconds) : seconds_(seconds > 0 ? seconds : 0) {}

Watchdog::~Watchdog() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

Watchdog::Watch Watchdog::watch(std::string what) {
    if (seconds_ <= 0) return Watch(nullptr);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });  // the first watch starts it
    {
        std::lock_guard<std::mutex> lock(mu_);
        armed_ = true;
        what_ = std::move(what);
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds_));
    }
    cv_.notify_all();
    return Watch(this);
}

Watchdog::Watch::~Watch() {
    if (dog_) dog_->disarm();
}

void Watchdog::disarm() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        armed_ = false;
    }
    cv_.notify_all();
}

void Watchdog::loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
        if (!armed_) {
            cv_.wait(lock);
            continue;
        }
        const auto deadline = deadline_;
        cv_.wait_until(lock, deadline);
        // Woken by a disarm, a new watch (a new deadline) or the time: only the time of the
        // watch still armed ends the process.
        if (stop_ || !armed_ || deadline_ != deadline || std::chrono::steady_clock::now() < deadline) continue;
        std::fflush(stdout);
        const std::string line = hang_message(what_, seconds_) + "\n";
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(exit_hang);  // no destructors: the main thread is blocked inside the driver
    }
}

}  // namespace bitgate
