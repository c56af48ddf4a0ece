// `spkl diff --plot`: KL(A||B) per position (a line; above 4000 rows the mean and the max of each
// run of positions) over the histogram of the rows' KLD (log-spaced bins, log-scale counts), drawn
// with gnuplot (harness/plot.hpp) from the per-row values the diff computed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "spkl_diff.hpp"

namespace bitgate::spkl {

// Bins [edges[i], edges[i+1]) with edges 10^(k / per_decade) over the positive finite values;
// values <= 0 (identical rows; rounding may leave a tiny negative) and NaN/inf are counted apart.
struct KldHistogram {
    std::vector<double> edges;     // counts.size() + 1 of them, increasing
    std::vector<uint64_t> counts;
    uint64_t not_positive = 0, nonfinite = 0;
};
KldHistogram kld_histogram(const std::vector<double>& kld, int per_decade = 5);

// Positions per point of the line: 1 up to 4000 rows, else ceil(rows / 2000).
uint64_t kld_line_bucket(uint64_t rows);

// The gnuplot commands that draw it (after the terminal lines), and the whole picture to `out`.
std::string diff_gnuplot(const DiffResult& r);
void plot_diff(const DiffResult& r, const std::string& out);

}  // namespace bitgate::spkl
