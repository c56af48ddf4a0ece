// Verb: bench. Per row two timings, isolated and back-to-back, each with GB/s against the read
// ceiling measured in the same run; bytes, launches.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_plot.hpp"
#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "errors.hpp"
#include "outfile.hpp"
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
    c->add_option("--min-iters", o.min_iters, "timed isolated calls at least (default 20)");
    auto plot = std::make_shared<BenchPlotOptions>();
    add_bench_plot_options(*c, *plot);
    CLI::App* plot_verb = add_bench_plot_verb(*c, rc);
    c->callback([&rc, owned, plot, plot_verb] {
        if (plot_verb->parsed()) return;  // `bench plot` drew a saved run
        BenchOptions& o = *owned;
        check_bench_plot(*plot);
        const std::vector<BenchItem> items = bench_selection(o);  // names checked, something to time
        // Outputs: not one file for both, not over a catalog the run reads.
        refuse_outputs({{"--json", o.json}, {"--plot", plot->out}}, check_inputs(CheckOptions{.root = o.root}));
        // A compute peak names a family whose rows are drawn against it: known and benched, or
        // the run would end in that error after its device time.
        for (const auto& [f, peak] : parse_peaks(plot->compute_peaks)) {
            try {
                (void)family(f);
            } catch (const BadInput& e) {
                throw BadInput("--compute-peak: " + std::string(e.what()));
            }
            if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), f) == o.families.end())
                throw BadInput("--compute-peak " + f + ": not among the --family selection");
        }
        // The timing loop stops at 2000 calls whatever it is asked: a larger floor would be ignored.
        if (o.min_iters < 1 || o.min_iters > 2000)
            throw BadInput("--min-iters " + std::to_string(o.min_iters) + ": expected 1 to 2000 timed calls");
        require_gpu();
        // The JSON target is opened first, so that a path it cannot write fails before the run.
        std::unique_ptr<OutFile> out;
        if (!o.json.empty()) out = std::make_unique<OutFile>(o.json);
        BenchDevice d{.name = gpu_name()};
        d.read_ceiling_gbps = measure_read_ceiling();
        d.l2_bytes = device_l2_bytes();
        const auto rows = run_bench(items, o, d.read_ceiling_gbps);
        std::fputs(bench_table(d, rows).c_str(), stdout);
        if (out || !plot->out.empty()) {
            const std::string j = bench_json(d, rows);
            if (out) {  // first: a picture that fails does not cost the numbers
                out->write(j.data(), j.size());
                out->commit();
            }
            if (!plot->out.empty()) draw_bench(nlohmann::json::parse(j), "bench", *plot);
        }
        rc = exit_ok;
    });
}

}  // namespace bitgate
