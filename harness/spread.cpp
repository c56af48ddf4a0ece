#include "spread.hpp"

#include <algorithm>
#include <cstdio>

#include "errors.hpp"
#include "report.hpp"
#include "report_merge.hpp"
#include "shards.hpp"

namespace bitgate {

SpreadRun spread_run(const Spread& s, const std::vector<std::string>& argv, int shard_index, int shard_count) {
    TempDir dir("workers");
    const std::vector<std::string> base = strip_options(argv, {"--gpus", "--workers", "--shard", "--json", "--junit"},
                                                        {"--quiet", "--failures-only", "--allow-empty"});
    std::vector<std::vector<std::string>> argvs;
    std::vector<std::string> shards, reports;
    for (int w = 0; w < s.workers; ++w) {
        const ShardSpec sub = sub_shard(shard_index, shard_count, w, s.workers);
        shards.push_back(std::to_string(sub.index) + "/" + std::to_string(sub.count));
        reports.push_back(dir.path() + "/worker-" + std::to_string(w) + ".json");
        auto a = base;
        for (const std::string& x : {std::string("--shard"), shards.back(), std::string("--json"), reports.back(),
                                     std::string("--allow-empty"), std::string("--quiet")})
            a.push_back(x);
        argvs.push_back(std::move(a));
    }
    std::string started;
    for (int w = 0; w < s.workers; ++w)
        started += (w ? ", " : "") + s.what(w) + (s.gpus ? " (CUDA_VISIBLE_DEVICES=" + s.visible[size_t(w)] + ")" : "") +
                   " shard " + shards[size_t(w)];
    std::printf("workers: %d: %s\n", s.workers, started.c_str());
    const auto exits = run_workers(s, argvs, dir.path());

    SpreadRun run;
    std::vector<Report> parts;
    for (int w = 0; w < s.workers; ++w) {
        const WorkerExit& e = exits[size_t(w)];
        run.worst_rc = std::max(run.worst_rc, e.rc);
        const std::string who = s.what(w) + ", shard " + shards[size_t(w)];
        if (e.rc != exit_ok && e.rc != exit_failed) {
            std::printf("%s: %s %d after %.1f s; the end of its log:\n", who.c_str(), e.signal ? "killed by signal" : "exit",
                        e.signal ? e.signal : e.rc, e.seconds);
            print_log_tail(stdout, e.log, "[" + s.what(w) + "]", 20);
            continue;
        }
        try {
            parts.push_back(read_report(reports[size_t(w)]));
        } catch (const BadInput& err) {
            std::printf("%s: exit %d but its report is unreadable: %s; the end of its log:\n", who.c_str(), e.rc, err.what());
            print_log_tail(stdout, e.log, "[" + s.what(w) + "]", 20);
            run.worst_rc = std::max(run.worst_rc, int(exit_internal));
            continue;
        }
        const Tally t = tally(parts.back().results);
        std::printf("%s: exit %d, %zu cases, %zu failed, in %.1f s\n", who.c_str(), e.rc, t.total, t.failed, e.seconds);
    }
    if (parts.size() != size_t(s.workers)) return run;
    const Report merged = merge_reports(parts, shard_index, shard_count);
    run.results = merged.results;
    run.device = merged.device;
    run.complete = true;
    return run;
}

}  // namespace bitgate
