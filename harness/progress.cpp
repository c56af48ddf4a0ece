#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace bitgate {

std::string duration_text(double s) {
    if (!(s >= 0) || !std::isfinite(s) || s > 1e9) return "--";
    const auto t = static_cast<uint64_t>(std::llround(s));
    char b[32];
    if (t < 60) std::snprintf(b, sizeof b, "%llus", static_cast<unsigned long long>(t));
    else if (t < 3600) std::snprintf(b, sizeof b, "%llum%02llus", static_cast<unsigned long long>(t / 60),
                                     static_cast<unsigned long long>(t % 60));
    else std::snprintf(b, sizeof b, "%lluh%02llum", static_cast<unsigned long long>(t / 3600),
                       static_cast<unsigned long long>(t / 60 % 60));
    return b;
}

namespace {
// Three significant figures at most, never an exponent: "0.25", "7.50", "31.2", "4210".
std::string rate_text(double r) {
    char b[32];
    if (r >= 100) std::snprintf(b, sizeof b, "%.0f", r);
    else if (r >= 10) std::snprintf(b, sizeof b, "%.1f", r);
    else std::snprintf(b, sizeof b, "%.2f", r);
    return b;
}
}  // namespace

std::string progress_text(uint64_t done, uint64_t total, double elapsed_s, std::string_view unit) {
    char b[96];
    // Percent rounded down, so 100% means finished.
    const unsigned pct = total ? static_cast<unsigned>(std::min(done, total) * 100 / total) : 0;
    std::snprintf(b, sizeof b, "[%llu/%llu] %u%% ", static_cast<unsigned long long>(done),
                  static_cast<unsigned long long>(total), pct);
    std::string s = b;
    if (done == 0 || !(elapsed_s > 0)) return s + "-- " + std::string(unit) + "/s, -- left";
    const double rate = double(done) / elapsed_s;
    const double left = done >= total ? 0 : double(total - done) / rate;
    return s + rate_text(rate) + " " + std::string(unit) + "/s, " + duration_text(left) + " left";
}

bool progress_wanted() {
    const char* ci = std::getenv("CI");
    return isatty(STDERR_FILENO) == 1 && !(ci && *ci);
}

Progress::Progress(std::string unit, bool on)
    : unit_(std::move(unit)), on_(on), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { clear(); }

void Progress::operator()(uint64_t done, uint64_t total, std::string_view current) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    std::string line = progress_text(done, total, std::chrono::duration<double>(now - start_).count(), unit_);
    if (!current.empty()) line += "  " + std::string(current);
    // One screen line: a line that wraps could not be erased by \r.
    size_t width = 100;
    winsize ws{};
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) width = ws.ws_col - 1;
    if (line.size() > width) line.resize(width);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    shown_ = true;
}

void Progress::clear() {
    if (!on_ || !shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
}

}  // namespace bitgate
