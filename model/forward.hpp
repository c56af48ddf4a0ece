// Running the graph: a runner executes one Graph (host models or device launchers); run_sequence
// drives a prompt (one prefill) and then decode steps (one token each) through a runner.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph.hpp"
#include "host_path.hpp"
#include "weights.hpp"

namespace bitgate::model {

// One forward call as it ran.
struct CallStat {
    Mode mode = Mode::prefill;
    int64_t n = 0, pos = 0;
    int predicted = 0;       // predict_launches(...).total()
    int graph_steps = 0;     // the graph description's launch sum
    int measured = -1;       // kernel nodes of the captured CUDA graph (-1 on the host)
    double seconds = 0;
};

class Runner {
public:
    virtual ~Runner() = default;
    // logits: [g.n][n_vocab] f32. ids: g.n token ids, already validated against the vocabulary.
    virtual void forward(const Graph& g, const int32_t* ids, float* logits, CallStat& st) = 0;
    virtual std::string where() const = 0;  // "host" or the device's name
};

// The weights a graph reads, checked for presence, type and shape (BadInput naming the tensor).
void check_weights(const Model& m, const Graph& g);

// Positions a sequence may span: those rope's cos/sin table is proven for (docs/rope.md).
inline constexpr int64_t kMaxPositions = 32768;

// Deterministic tokens: count ids in [0, n_vocab) from seed.
std::vector<int32_t> seeded_tokens(int64_t count, int64_t n_vocab, uint64_t seed);
// Whitespace-separated decimal ids from a text file (BadInput "FILE: ..." on anything else).
std::vector<int32_t> read_tokens(const std::string& path);

struct SequenceResult {
    int64_t rows = 0, vocab = 0;
    std::vector<float> logits;    // [rows][vocab]: one row per scored position
    std::vector<uint32_t> tokens, targets;  // per row: the input token, the next token (or none)
    std::vector<CallStat> calls;
    double prefill_seconds = 0, decode_seconds = 0;
};

// Prefill tokens[0 .. prompt), then decode tokens[prompt .. prompt+decode) one at a time
// (teacher-forced: the next input is the given token, not the argmax). tokens must hold at
// least prompt + decode ids; row i's target is tokens[i + 1] when there is one.
SequenceResult run_sequence(const Model& m, Runner& r, const std::string& path, std::span<const int32_t> tokens,
                            int64_t prompt, int64_t decode);

// MD5 of the logits bytes (the f32 rows in order), as md5sum prints it.
std::string logits_md5(const SequenceResult& s);

struct HostOptions {
    // The reference path's dequantized f32 weights are kept up to this many bytes (a 7B model's
    // f32 copy is 30 GB); past it, each use dequantizes into one scratch buffer. Same bytes.
    size_t dequantized_cache_bytes = size_t(6) << 30;
    // The instructions of the host models that have several (refimpl/host_path.hpp): the time
    // changes, never a byte.
    ref::HostPath host_path = ref::HostPath::fastest;
};
std::unique_ptr<Runner> make_host_runner(const Model& m, const std::string& path, int64_t ctx,
                                         const HostOptions& opt = {});

struct DeviceOptions {
    int sm_count = 0;  // 0: the card's; otherwise every SM-count dispatch sees this number
};
// Throws NoGpu where no device is usable (and in a build without CUDA).
std::unique_ptr<Runner> make_device_runner(const Model& m, const std::string& path, int64_t ctx,
                                           const DeviceOptions& opt);

}  // namespace bitgate::model

namespace bitgate::model {

// Device timing of one graph (bitgate model bench).
struct BenchStats {
    double graph_ms = 0;                       // mean replay time of the captured graph
    int reps = 0;
    int kernel_nodes = 0;
    std::map<std::string, double> family_ms;   // per family, from events around each step of an
                                               // eager (uncaptured) run, mean over reps
};
// Throws NoGpu without a device. The caches hold whatever was last stored (timing only).
BenchStats device_bench(const Model& m, const Graph& g, int reps, const DeviceOptions& opt);

}  // namespace bitgate::model
