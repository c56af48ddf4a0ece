// Spreading one run over worker processes: `--gpus all|N` (one worker per GPU, each seeing only
// its own through CUDA_VISIBLE_DEVICES), `--workers N` (the same without touching which GPUs a
// worker sees), or both (`--gpus N --workers M`: M workers dealt round-robin over the N GPUs, each
// seeing only its own: the host models are the slow part of a check, so a GPU serves several
// workers). Each worker is this executable again, with its own shard and report file; the parent
// waits for all of them and merges what they report.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace bitgate {

struct Spread {
    int workers = 0;                      // 0: no spreading
    bool gpus = false;                    // each worker sees one GPU
    int n_gpus = 0;                       // the GPUs spread over (gpus only)
    std::vector<std::string> visible;     // per worker: its CUDA_VISIBLE_DEVICES (gpus only)
    std::vector<std::string> gpu_names;   // per worker: its device's name (gpus only)
    std::string what(int w) const;        // "GPU 1", "worker 3 (GPU 1)" or "worker 1"
};

// From the --gpus and --workers options ("" and -1 when absent). --gpus in a build without CUDA is
// bad input naming why; --gpus where the driver sees no device is NoGpu; asking for more GPUs
// than are visible, or for fewer workers than GPUs, is bad input.
Spread resolve_spread(const std::string& gpus, int workers);

// Worker w's GPU when `workers` workers are dealt over `gpus` GPUs: w modulo gpus, so the GPUs'
// loads differ by one worker at most.
inline int gpu_of_worker(int w, int gpus) { return w % gpus; }

// Each worker's CUDA_VISIBLE_DEVICES: its GPU's entry in the parent's list (under
// CUDA_VISIBLE_DEVICES=2,3 the visible device i is the i-th of that list, not device i), or the
// GPU's index where the parent has no list.
std::vector<std::string> visible_of_workers(const std::vector<std::string>& parent, int gpus, int workers);

// argv without the named options (each as "--name VALUE" or "--name=VALUE") and flags.
std::vector<std::string> strip_options(const std::vector<std::string>& argv, const std::vector<std::string>& with_value,
                                       const std::vector<std::string>& flags);

struct WorkerExit {
    int rc = 0;          // the exit code; 128 + signal when killed
    int signal = 0;      // the signal that ended it, if one did
    double seconds = 0;
    std::string log;     // its stdout and stderr
};

// A private directory under $TMPDIR (or /tmp), removed with everything in it unless keep() was called.
class TempDir {
public:
    explicit TempDir(const char* tag);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    void keep() { keep_ = true; }

private:
    std::string path_;
    bool keep_ = false;
};

// Starts one process per argv (argv[0] is shown; the program is this executable), with the
// spread's CUDA_VISIBLE_DEVICES where it has them, stdout and stderr to DIR/worker-W.log, and
// waits for all of them. A worker outlives the parent only until the parent dies (Linux: it is
// sent SIGTERM then).
std::vector<WorkerExit> run_workers(const Spread& s, const std::vector<std::vector<std::string>>& argvs, const std::string& dir);

// The last `lines` lines of a worker's log, each prefixed ("[GPU 1] ...").
void print_log_tail(std::FILE* out, const std::string& log, const std::string& prefix, size_t lines);

}  // namespace bitgate
