// Verb: bench. Time, bytes, GB/s against the read ceiling measured in the same run, launches.
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "registry.hpp"

namespace bitgate {

void add_bench_verb(CLI::App& app, int& rc) {
    auto owned = std::make_shared<BenchOptions>();  // lives as long as the callback
    BenchOptions& o = *owned;
    auto* c = app.add_subcommand("bench", "device benchmark of the catalog lines marked `bench` (needs a GPU)");
    c->add_option("--family", o.families, "families (default: all)")->delimiter(',');
    c->add_option("--variant", o.variants, "variants (default: all)")->delimiter(',');
    c->add_option("--root", o.root, "directory holding shapes/");
    c->add_option("--json", o.json, "write the rows as JSON");
    c->add_option("--min-iters", o.min_iters, "timed calls at least (default 20)");
    c->callback([&rc, owned] {
        BenchOptions& o = *owned;
        for (const auto& f : o.families) (void)family(f);
        if (std::string why = gpu_missing(); !why.empty()) throw NoGpu(why);
        std::printf("device: %s\n", gpu_name().c_str());
        const double ceiling = measure_read_ceiling();
        std::printf("read ceiling (4 GiB, 16-byte loads, median of 10): %.0f GB/s\n", ceiling);
        const auto rows = run_bench(o, ceiling);
        std::printf("%-16s %-15s %-26s %10s %10s %9s %8s %6s %9s\n", "family", "variant", "shape", "median_us",
                    "MB", "GB/s", "%ceil", "launch", "rate");
        for (const auto& r : rows) {
            char rate[32] = "";
            if (r.ops > 0) std::snprintf(rate, sizeof rate, "%.1f %s", r.ops_rate / 1e12, r.ops_unit.c_str());
            const std::string launches = r.prepare_launches ? std::to_string(r.launches) + "+" + std::to_string(r.prepare_launches) + "p"
                                                            : std::to_string(r.launches);
            std::printf("%-16s %-15s %-26s %10.2f %10.2f %9.1f %7.1f%% %6s %9s\n", r.family.c_str(), r.variant.c_str(),
                        r.shape.c_str(), r.median_us, r.bytes / 1e6, r.gbps, r.pct_ceiling, launches.c_str(), rate);
        }
        if (!o.json.empty()) {
            nlohmann::json j = {{"device", gpu_name()}, {"read_ceiling_gbps", ceiling}, {"rows", nlohmann::json::array()}};
            for (const auto& r : rows)
                j["rows"].push_back({{"family", r.family}, {"variant", r.variant}, {"shape", r.shape},
                                     {"median_us", r.median_us}, {"p10_us", r.p10_us}, {"p90_us", r.p90_us},
                                     {"bytes", r.bytes}, {"gbps", r.gbps}, {"pct_ceiling", r.pct_ceiling},
                                     {"launches", r.launches}, {"prepare_launches", r.prepare_launches}, {"iters", r.iters}, {"rotation", r.rotation},
                                     {"ops", r.ops}, {"ops_per_s", r.ops_rate}, {"ops_unit", r.ops_unit}});
            std::ofstream(o.json) << j.dump(1) << "\n";
        }
        rc = exit_ok;
    });
}

}  // namespace bitgate
