#include "shards.hpp"

#include <fstream>

#include "errors.hpp"

namespace bitgate {

bool whole_number(const std::string& s, int& out) {
    if (s.empty() || s.size() > 9) return false;
    for (char ch : s)
        if (ch < '0' || ch > '9') return false;
    out = std::stoi(s);
    return true;
}

std::string shard_name(int index, int count) {
    return count > 1 ? std::to_string(index) + "/" + std::to_string(count) : "";
}

bool parse_shard_name(const std::string& s, int& index, int& count) {
    const auto slash = s.find('/');
    return slash != std::string::npos && whole_number(s.substr(0, slash), index) &&
           whole_number(s.substr(slash + 1), count) && count >= 1 && index < count;
}

namespace {

std::string shown(const char* name, const char* value) { return std::string(name) + "=" + printable(value); }

// A Slurm job array: SLURM_ARRAY_TASK_ID runs from SLURM_ARRAY_TASK_MIN (which need not be 0:
// `--array=1-8` starts at 1) in steps of SLURM_ARRAY_TASK_STEP, SLURM_ARRAY_TASK_COUNT tasks.
ShardSpec from_slurm(const EnvLookup& env) {
    const char* id = env("SLURM_ARRAY_TASK_ID");
    const char* count = env("SLURM_ARRAY_TASK_COUNT");
    const char* min = env("SLURM_ARRAY_TASK_MIN");
    const char* step = env("SLURM_ARRAY_TASK_STEP");
    std::string seen = shown("SLURM_ARRAY_TASK_ID", id);
    for (const char* n : {"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_STEP"})
        if (const char* v = env(n)) seen += " " + shown(n, v);
    if (!count || !min)
        throw BadInput("--shard auto: " + seen + ": SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN must be set with it");
    int i = 0, n = 0, lo = 0, st = 1;
    if (!whole_number(id, i) || !whole_number(count, n) || !whole_number(min, lo) || (step && !whole_number(step, st)))
        throw BadInput("--shard auto: " + seen + ": expected whole numbers");
    if (n < 1 || st < 1 || i < lo || (i - lo) % st != 0 || (i - lo) / st >= n)
        throw BadInput("--shard auto: " + seen +
                       ": not task MIN + k*STEP with 0 <= k < COUNT (use a regular array such as --array=0-" +
                       std::to_string(n > 0 ? n - 1 : 0) + ", or --shard I/N)");
    return ShardSpec{.index = (i - lo) / st, .count = n, .from = seen};
}

// A Kubernetes Indexed Job gives each pod JOB_COMPLETION_INDEX (0 .. completions-1) but not the
// number of completions: the manifest sets BITGATE_SHARD_COUNT to it (docs/sharding.md).
ShardSpec from_kubernetes(const EnvLookup& env) {
    const char* id = env("JOB_COMPLETION_INDEX");
    const char* count = env("BITGATE_SHARD_COUNT");
    if (!count)
        throw BadInput("--shard auto: " + shown("JOB_COMPLETION_INDEX", id) +
                       " is set but BITGATE_SHARD_COUNT is not (set it to the Job's completions)");
    const std::string seen = shown("JOB_COMPLETION_INDEX", id) + " " + shown("BITGATE_SHARD_COUNT", count);
    int i = 0, n = 0;
    if (!whole_number(id, i) || !whole_number(count, n) || n < 1 || i >= n)
        throw BadInput("--shard auto: " + seen + ": expected 0 <= index < count");
    return ShardSpec{.index = i, .count = n, .from = seen};
}

ShardSpec from_gtest(const EnvLookup& env, const char* prefix) {
    const char* i = env("GTEST_SHARD_INDEX");
    const char* n = env("GTEST_TOTAL_SHARDS");
    if (!i || !n) throw BadInput(std::string(prefix) + "GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS go together: only one is set");
    const std::string seen = shown("GTEST_SHARD_INDEX", i) + " " + shown("GTEST_TOTAL_SHARDS", n);
    int index = 0, count = 0;
    if (!whole_number(i, index) || !whole_number(n, count) || count < 1 || index >= count)
        throw BadInput(prefix + seen + ": expected 0 <= index < total");
    return ShardSpec{.index = index, .count = count, .from = seen, .gtest = true};
}

}  // namespace

ShardSpec resolve_shard(const std::string& option, const EnvLookup& env) {
    if (option == "auto") {
        // One scheduler per process; should several leave their variables, the first of this
        // order wins (docs/sharding.md): Slurm, Kubernetes, gtest.
        if (env("SLURM_ARRAY_TASK_ID")) return from_slurm(env);
        if (env("JOB_COMPLETION_INDEX")) return from_kubernetes(env);
        if (env("GTEST_SHARD_INDEX") || env("GTEST_TOTAL_SHARDS")) return from_gtest(env, "--shard auto: ");
        throw BadInput("--shard auto: none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, GTEST_SHARD_INDEX is set");
    }
    if (!option.empty()) {
        ShardSpec s{.from = "--shard " + option};
        if (!parse_shard_name(option, s.index, s.count))
            throw BadInput("--shard " + option + ": expected I/N with 0 <= I < N, or auto");
        return s;
    }
    if (!env("GTEST_SHARD_INDEX") && !env("GTEST_TOTAL_SHARDS")) return ShardSpec{};
    return from_gtest(env, "");
}

void touch_gtest_status(const EnvLookup& env) {
    if (const char* f = env("GTEST_SHARD_STATUS_FILE"); f && *f) {
        std::ofstream touch(f, std::ios::app);
        if (!touch) throw BadInput(std::string("GTEST_SHARD_STATUS_FILE ") + f + ": cannot create");
    }
}

}  // namespace bitgate
