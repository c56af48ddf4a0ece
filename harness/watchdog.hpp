// A device case that never finishes cannot be cancelled from inside the process: a kernel that
// spins on an mbarrier phase it missed, or on a flag that nothing sets, keeps the CUDA context
// busy, and the host waits on it for ever. A run that hangs says nothing and is killed from
// outside, often without its partial report. The watchdog turns the hang into an answer: when a
// watched piece of work outlives its limit, it prints one line naming it on stderr and ends the
// process with exit_hang (the results printed so far stay on stdout).
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace bitgate {

class Watchdog {
public:
    // seconds <= 0: never fires. Its thread starts with the first watch (a host-only run has none).
    explicit Watchdog(double seconds);
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    // The limit runs while a Watch lives; its destruction disarms it.
    class Watch {
    public:
        Watch(Watch&& o) noexcept : dog_(o.dog_) { o.dog_ = nullptr; }
        Watch& operator=(Watch&&) = delete;
        ~Watch();

    private:
        friend class Watchdog;
        explicit Watch(Watchdog* dog) : dog_(dog) {}
        Watchdog* dog_;
    };

    // Arms the limit for `what` (a case id: the one line printed if it fires), from now. One watch
    // at a time: a session runs one device case at a time.
    [[nodiscard]] Watch watch(std::string what);
    double seconds() const { return seconds_; }

private:
    void disarm();
    void loop();

    const double seconds_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool armed_ = false, stop_ = false;
    std::string what_;
    std::chrono::steady_clock::time_point deadline_;
    std::thread thread_;
};

// The line the watchdog prints, without its newline (tests match it).
std::string hang_message(const std::string& what, double seconds);

}  // namespace bitgate
