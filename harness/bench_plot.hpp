// `bitgate bench --plot` and `bitgate bench plot`: per shape and variant, the share of the ceiling
// a call reaches, beside a peer's figures when given, drawn with gnuplot (plot.hpp).
//
// Input: the JSON `bitgate bench --json` writes. Rows of either form are read: one timing per row
// (median_us, pct_ceiling, ops_per_s at the row's top level), or two (objects `isolated` and
// `back_to_back`, each with available, median_us, pct_ceiling, ops_per_s); a second timing is its own
// series, "VARIANT back-to-back". A row's value is pct_ceiling (of the read ceiling measured in the
// same run) unless its family has a compute peak (--compute-peak FAMILY=N): then ops_per_s / N.
//
// Peer file (--peer): text, one figure a line, `#` comments and blank lines ignored:
//     family,shape,peer name,value
// shape spelled as the bench JSON spells it ("N=3584 K=3584 n=512"); value either a percent of
// the same ceiling ("7.9%") or a time per call ("84.3us", "0.0843ms"), which is converted with the
// bytes (or operations) and the ceiling of the bench row of that family and shape.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace bitgate {

struct BenchPlotOptions {
    std::string out, peer;
    std::vector<std::string> compute_peaks;  // "FAMILY=N", N in the family's ops unit (TOPS, TFLOPS)
};

struct BenchPicture {
    std::string device;
    double ceiling_gbps = 0;
    std::vector<std::string> categories;            // "family shape", in the rows' order, then peers' new ones
    std::vector<std::string> series;                // variants (and "VARIANT back-to-back"), then peers
    std::vector<bool> peer_series;                  // per series
    std::map<std::string, double> compute_peaks;    // family -> ops per second
    std::map<std::string, std::string> ops_units;   // family -> unit ("TOPS")
    struct Point {
        size_t category, series;
        double pct;
    };
    std::vector<Point> points;
};

// --compute-peak values ("FAMILY=N", N > 0 in the family's ops unit): family -> operations per
// second. BadInput on a malformed one.
std::map<std::string, double> parse_peaks(const std::vector<std::string>& specs);
// `source` names the JSON in messages. Throws BadInput ("FILE: what is wrong", "PEER:LINE: ...").
BenchPicture bench_picture(const nlohmann::json& bench, const std::string& source, const BenchPlotOptions& o);
// The gnuplot commands that draw it (after the terminal lines).
std::string bench_gnuplot(const BenchPicture& p);
// bench_picture + bench_gnuplot + render, to o.out (never over `inputs` or the peer file).
void draw_bench(const nlohmann::json& bench, const std::string& source, const BenchPlotOptions& o,
                std::vector<std::string> inputs = {});

// --plot, --peer and --compute-peak on `bench`; check_bench_plot() refuses a missing gnuplot or a
// bad peer file before the device run.
void add_bench_plot_options(CLI::App& bench, BenchPlotOptions& o);
// `verb`: true for `bench plot` (its errors name the verb and --out), false for `bench --plot`.
void check_bench_plot(const BenchPlotOptions& o, bool verb = false);
// `bench plot BENCH.json --out F.svg`: returns the subcommand (the bench verb skips its run when it
// was given).
CLI::App* add_bench_plot_verb(CLI::App& bench, int& rc);

}  // namespace bitgate
