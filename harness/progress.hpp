// One updating line on a terminal for long work (check, golden check, prop, spkl diff):
// "[1200/5000] 24% 310 rows/s, 12s left  current item". It goes to stderr and only when stderr is
// a terminal and CI is unset, so logs and pipes never see it; results on stdout are untouched.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace bitgate {

// "42s", "3m05s", "2h07m"; "--" for a time that is not known (negative, infinite, NaN).
std::string duration_text(double seconds);
// The line's text without its current item: done/total, percent, rate over the elapsed time and
// the time left at that rate. Rate and time left are "--" until something is done and time has passed.
std::string progress_text(uint64_t done, uint64_t total, double elapsed_s, std::string_view unit);

// Whether progress is shown: stderr is a terminal and CI is unset or empty.
bool progress_wanted();

class Progress {
public:
    explicit Progress(std::string unit = "cases", bool on = progress_wanted());
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    bool on() const { return on_; }
    // Redraws the line (at most ten times a second; always the last step) with `current` after it.
    void operator()(uint64_t done, uint64_t total, std::string_view current = {});
    // Erases the line, so that the next output starts on a clean line.
    void clear();

private:
    std::string unit_;
    bool on_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace bitgate
