#include "bench_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace bitgate {

Rotation plan_rotation(size_t set_bytes, size_t l2_bytes, size_t budget) {
    const size_t set = std::max<size_t>(set_bytes, 1);
    size_t copies = (kTargetFactor * l2_bytes + set - 1) / set;
    copies = std::clamp<size_t>(copies, 2, size_t(kMaxCopies));
    while (copies > 1 && copies * set > budget) --copies;
    Rotation r;
    r.copies = int(copies);
    r.bytes = copies * set_bytes;
    r.beyond_l2 = l2_bytes > 0 && r.bytes >= kDramFactor * l2_bytes;
    return r;
}

int calls_per_graph(int copies, double isolated_us, int launches_per_call) {
    if (copies < 1 || launches_per_call < 1) return 0;
    const int64_t max_calls = kMaxGraphNodes / launches_per_call;
    if (copies > max_calls) return 0;
    const double want = isolated_us > 0 ? kReplayTargetUs / isolated_us : double(max_calls);
    int64_t calls = std::max<int64_t>(copies, int64_t(want) + 1);
    calls = (calls + copies - 1) / copies * copies;  // whole turns of the rotation
    while (calls > max_calls) calls -= copies;       // stays >= copies: copies <= max_calls
    return int(calls);
}

std::string back_to_back_blocker(const Rotation& r, size_t l2_bytes, int launches_per_call) {
    char why[256];
    if (launches_per_call < 1) return "the call launches no kernel";
    if (!r.beyond_l2) {
        std::snprintf(why, sizeof why, "%d copies of the buffers hold %.1f MiB, under %zu x L2 (%.1f MiB): calls would read from L2",
                      r.copies, double(r.bytes) / (1 << 20), kDramFactor, double(kDramFactor * l2_bytes) / (1 << 20));
        return why;
    }
    if (calls_per_graph(r.copies, 0, launches_per_call) == 0) {
        std::snprintf(why, sizeof why, "one turn of the rotation is %d calls of %d launches, over %d graph nodes", r.copies,
                      launches_per_call, kMaxGraphNodes);
        return why;
    }
    return "";
}

Figures figures(double us_per_call, double bytes, double ops, double ceiling_gbps) {
    Figures f;
    if (us_per_call <= 0) return f;
    f.gbps = bytes / (us_per_call * 1e-6) / 1e9;
    f.pct_ceiling = ceiling_gbps > 0 ? 100.0 * f.gbps / ceiling_gbps : 0;
    f.ops_rate = ops > 0 ? ops / (us_per_call * 1e-6) : 0;
    return f;
}

}  // namespace bitgate
