// The bench report: both timings of every row, labelled, in text and in JSON.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bench.hpp"

namespace bitgate {

namespace {

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

// "  us/call     GB/s   %ceil      rate" for one timing.
std::string cells(const BenchTiming& t, const BenchRow& r) {
    if (!t.available) return format("%9s %9s %7s %10s", "n/a", "", "", "");
    std::string rate;
    if (r.ops > 0) rate = format("%.1f %s", t.fig.ops_rate / 1e12, r.ops_unit.c_str());
    return format("%9.2f %9.1f %6.1f%% %10s", t.median_us, t.fig.gbps, t.fig.pct_ceiling, rate.c_str());
}

nlohmann::json timing_json(const BenchTiming& t, bool back_to_back) {
    if (!t.available) return {{"available", false}, {"reason", t.why}};
    nlohmann::json j = {{"available", true},        {"median_us", t.median_us},     {"p10_us", t.p10_us},
                        {"p90_us", t.p90_us},       {"gbps", t.fig.gbps},           {"pct_ceiling", t.fig.pct_ceiling},
                        {"ops_per_s", t.fig.ops_rate}};
    if (back_to_back) {
        j["replays"] = t.samples;
        j["calls_per_replay"] = t.calls;
    } else {
        j["iters"] = t.samples;
    }
    return j;
}

}  // namespace

std::string bench_table(const BenchDevice& d, const std::vector<BenchRow>& rows) {
    std::string s;
    s += format("device: %s\n", d.name.c_str());
    s += format("read ceiling (4 GiB, 16-byte loads, median of 10): %.0f GB/s\n", d.read_ceiling_gbps);
    s += format("L2 %.1f MiB: buffers rotate over %zu x L2 where memory allows (rot: copies)\n", double(d.l2_bytes) / (1 << 20),
                kTargetFactor);
    s += "isolated: each call alone between two CUDA events, median; back-to-back: calls replayed in one CUDA graph, time per call\n";
    const std::string gap(16 + 1 + 15 + 1 + 26 + 1 + 10 + 1 + 6 + 1 + 5, ' ');
    s += format("%s | %-39s | %-39s\n", gap.c_str(), "isolated (one call)", "back-to-back (graph replay)");
    s += format("%-16s %-15s %-26s %10s %6s %5s | %9s %9s %7s %10s | %9s %9s %7s %10s\n", "family", "variant", "shape", "MB",
                "launch", "rot", "us/call", "GB/s", "%ceil", "rate", "us/call", "GB/s", "%ceil", "rate");
    std::string notes;
    for (const BenchRow& r : rows) {
        const std::string launches = r.prepare_launches ? format("%d+%dp", r.launches, r.prepare_launches) : format("%d", r.launches);
        s += format("%-16s %-15s %-26s %10.2f %6s %5d | %s | %s\n", r.family.c_str(), r.variant.c_str(), r.shape.c_str(),
                    r.bytes / 1e6, launches.c_str(), r.rotation, cells(r.isolated, r).c_str(), cells(r.back_to_back, r).c_str());
        if (!r.isolated.available)
            notes += format("isolated n/a: %s %s %s: %s\n", r.family.c_str(), r.variant.c_str(), r.shape.c_str(), r.isolated.why.c_str());
        if (!r.back_to_back.available)
            notes += format("back-to-back n/a: %s %s %s: %s\n", r.family.c_str(), r.variant.c_str(), r.shape.c_str(),
                            r.back_to_back.why.c_str());
    }
    return s + notes;
}

std::string bench_json(const BenchDevice& d, const std::vector<BenchRow>& rows) {
    nlohmann::json j = {{"device", d.name},
                        {"read_ceiling_gbps", d.read_ceiling_gbps},
                        {"l2_bytes", d.l2_bytes},
                        {"rows", nlohmann::json::array()}};
    for (const BenchRow& r : rows)
        j["rows"].push_back({{"family", r.family},
                             {"variant", r.variant},
                             {"shape", r.shape},
                             {"bytes", r.bytes},
                             {"ops", r.ops},
                             {"ops_unit", r.ops_unit},
                             {"launches", r.launches},
                             {"prepare_launches", r.prepare_launches},
                             {"rotation", r.rotation},
                             {"rotation_bytes", r.rotation_bytes},
                             {"isolated", timing_json(r.isolated, false)},
                             {"back_to_back", timing_json(r.back_to_back, true)}});
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // a name that is not UTF-8 gets U+FFFD
}

}  // namespace bitgate
