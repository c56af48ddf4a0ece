// The benchmark's sizing, as plain arithmetic so it is tested without a GPU: how many copies of a
// case's buffers to rotate through, how many calls one back-to-back graph holds, and the figures
// (GB/s, % of the read ceiling, operation rate) derived from a time per call.
#pragma once
#include <cstddef>
#include <string>

namespace bitgate {

// Copies of one buffer set (inputs, outputs, workspaces) that calls take in turn.
struct Rotation {
    int copies = 0;
    size_t bytes = 0;        // copies x set bytes
    bool beyond_l2 = false;  // bytes >= kDramFactor x L2: a call's data has left L2 when its turn comes again
};

// The rotation aims at kTargetFactor x L2 and counts as reading from DRAM from kDramFactor x L2 on.
inline constexpr size_t kTargetFactor = 4, kDramFactor = 2;
// Bounds: copies per case, and kernel nodes in one back-to-back graph.
inline constexpr int kMaxCopies = 4096;
inline constexpr int kMaxGraphNodes = 16384;
// One replay of the graph lasts about this long, so that the graph launch itself is noise.
inline constexpr double kReplayTargetUs = 2000;

// At least 2 copies (1 when even 2 do not fit), at most kMaxCopies, and at most `budget` bytes.
Rotation plan_rotation(size_t set_bytes, size_t l2_bytes, size_t budget);

// Calls per graph: a multiple of the rotation (so that replays continue the rotation with no call
// reusing the data of the call just before it), long enough that one replay lasts about
// kReplayTargetUs judging by the isolated time, and at most kMaxGraphNodes kernel launches.
// 0 when even one turn of the rotation exceeds the node bound.
int calls_per_graph(int copies, double isolated_us, int launches_per_call);

// "" when a back-to-back figure can be measured for this rotation, else why not.
std::string back_to_back_blocker(const Rotation& r, size_t l2_bytes, int launches_per_call);

// Figures of one time per call.
struct Figures {
    double gbps = 0, pct_ceiling = 0, ops_rate = 0;  // ops_rate: operations per second
};
Figures figures(double us_per_call, double bytes, double ops, double ceiling_gbps);

}  // namespace bitgate
