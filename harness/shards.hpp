// Shards: which part of the plan one process runs. `--shard I/N` names it; `--shard auto` takes it
// from the scheduler that started the process (a Slurm job array, a Kubernetes Indexed Job, a
// gtest runner); with no --shard, gtest's variables are honoured as they always were.
#pragma once
#include <cstdlib>
#include <functional>
#include <string>

namespace bitgate {

struct ShardSpec {
    int index = 0, count = 1;
    std::string from;    // what set it, for messages: "--shard 1/4", "SLURM_ARRAY_TASK_ID=2 ...", ""
    bool gtest = false;  // set by GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS (their status file is touched)
};

// Looks a variable up; std::getenv in use, a table in tests.
using EnvLookup = std::function<const char*(const char*)>;
inline const char* process_env(const char* name) { return std::getenv(name); }

// The shard of this process from the --shard option ("", "I/N" or "auto") and the environment.
// Throws BadInput with one line naming the option or the variables and their values.
ShardSpec resolve_shard(const std::string& option, const EnvLookup& env = process_env);
// gtest's protocol: a runner that shards touches GTEST_SHARD_STATUS_FILE to say it understood.
void touch_gtest_status(const EnvLookup& env = process_env);

// "I/N", or "" for the whole plan (N <= 1).
std::string shard_name(int index, int count);
// Reads "I/N" (0 <= I < N, both whole decimal numbers); false on anything else.
bool parse_shard_name(const std::string& s, int& index, int& count);
// A whole non-negative decimal number of at most 9 digits, nothing around it.
bool whole_number(const std::string& s, int& out);

// Shard I of N spread over W workers: worker w runs shard I + N*w of N*W. Group g is in shard I of
// N when g mod N == I; of those, worker w takes every W-th from the w-th, which are exactly the
// groups with g mod N*W == I + N*w. The workers' shards together are shard I of N, each group once.
inline ShardSpec sub_shard(int index, int count, int w, int workers) {
    return ShardSpec{.index = index + count * w, .count = count * workers};
}

}  // namespace bitgate
