// Fuzz target: any bytes as a peer's figures (`bench --peer`, lines 'family,shape,peer,value'),
// read alone and then converted against a bench row: a list of lines or BadInput, never a crash.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "bench_plot.hpp"
#include "errors.hpp"
#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    const fuzz::TempFile peer(data, size, "peer_fuzz");
    // One bench row per conversion the peer lines can ask for: by bytes and by operations.
    static const nlohmann::json bench = nlohmann::json::parse(R"({"read_ceiling_gbps": 4000, "rows": [
        {"family": "proj_q8_0", "variant": "v1", "shape": "n=1 k=2", "median_us": 80, "bytes": 1e8, "pct_ceiling": 31.25},
        {"family": "mmq_q8_0", "variant": "mma", "shape": "N=1 K=2 n=3", "median_us": 100, "bytes": 2e7, "pct_ceiling": 5,
         "ops": 1e10, "ops_per_s": 1e14}]})");
    for (const bool peak : {false, true}) {
        BenchPlotOptions o{.peer = peer.path()};
        if (peak) o.compute_peaks = {"mmq_q8_0=1979"};
        try {
            const BenchPicture p = bench_picture(bench, "bench.json", o);
            for (const auto& pt : p.points)
                if (std::isnan(pt.pct) || pt.category >= p.categories.size() || pt.series >= p.series.size()) std::abort();
        } catch (const BadInput&) {
        }
    }
    return 0;
}
