#include "spkl_plot.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "plot.hpp"

namespace bitgate::spkl {

// A picture only: log10 and pow here never reach a result or a digest.
KldHistogram kld_histogram(const std::vector<double>& kld, int per_decade) {
    KldHistogram h;
    double lo = INFINITY, hi = -INFINITY;
    for (double x : kld) {
        if (!std::isfinite(x)) ++h.nonfinite;
        else if (x <= 0) ++h.not_positive;
        else lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (!(lo <= hi)) return h;
    const double b = per_decade;
    const auto k0 = static_cast<int64_t>(std::floor(std::log10(lo) * b));
    auto k1 = static_cast<int64_t>(std::floor(std::log10(hi) * b)) + 1;
    auto edge = [&](int64_t k) { return std::pow(10.0, double(k) / b); };
    // log10 may land a value a hair off its bin: widen the ends so that every value has one.
    int64_t first = k0;
    while (edge(first) > lo) --first;
    while (edge(k1) <= hi) ++k1;
    for (int64_t k = first; k <= k1; ++k) h.edges.push_back(edge(k));
    h.counts.assign(h.edges.size() - 1, 0);
    for (double x : kld) {
        if (!std::isfinite(x) || x <= 0) continue;
        // The bin whose [lower, upper) holds x, by the edges themselves.
        const size_t i = size_t(std::upper_bound(h.edges.begin(), h.edges.end(), x) - h.edges.begin()) - 1;
        ++h.counts[i];
    }
    return h;
}

uint64_t kld_line_bucket(uint64_t rows) { return rows <= 4000 ? 1 : (rows + 1999) / 2000; }

namespace {
std::string base_name(const std::string& p) {
    const auto s = p.find_last_of('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}
}  // namespace

std::string diff_gnuplot(const DiffResult& r) {
    using plot::num;
    using plot::quote;
    std::vector<double> kld(r.per_row.size());
    for (size_t i = 0; i < kld.size(); ++i) kld[i] = r.per_row[i].kld;
    std::ostringstream g;
    g << "set multiplot layout 2,1\n";

    // Per position.
    const uint64_t bucket = kld_line_bucket(kld.size());
    g << "$line << EOD\n";
    for (size_t i = 0; i < kld.size(); i += bucket) {
        double sum = 0, mx = NAN;
        uint64_t n = 0;
        for (size_t j = i; j < std::min<size_t>(kld.size(), i + bucket); ++j)
            if (std::isfinite(kld[j])) sum += kld[j], ++n, mx = std::isnan(mx) ? kld[j] : std::max(mx, kld[j]);
        g << i << " " << num(n ? sum / double(n) : NAN) << " " << num(mx) << "\n";
    }
    g << "EOD\n";
    g << "set title " << quote("KL(A||B) per position, A = " + base_name(r.path_a) + ", B = " + base_name(r.path_b)) << "\n";
    g << "set xlabel 'position (row)'\nset ylabel 'KLD'\nset grid\nset key top right\n";
    if (!kld.empty()) g << "set xrange [0:" << num(double(kld.size() - 1) + (kld.size() == 1)) << "]\n";
    g << "set yrange [0:*]\n";
    // The mean over the finite rows, as the diff reports it, as a dashed level.
    const std::string mean = std::isfinite(r.kld_mean) && r.finite_rows > 0
                                 ? ", " + num(r.kld_mean) + " with lines dt 2 lw 1.5 lc rgb 'black' title " +
                                       quote("mean KLD " + num(r.kld_mean))
                                 : "";
    if (bucket == 1) {
        g << "plot $line using 1:2 with lines lw 1 lc 1 title 'KLD per position'" << mean << "\n";
    } else {
        const std::string b = std::to_string(bucket);
        g << "plot $line using 1:3 with lines lw 1 lc 7 title " << quote("max KLD per " + b + " positions")
          << ", $line using 1:2 with lines lw 1.5 lc 1 title " << quote("mean KLD per " + b + " positions") << mean << "\n";
    }

    // Histogram.
    const KldHistogram h = kld_histogram(kld);
    std::string title = "KLD histogram (" + std::to_string(kld.size()) + " rows, 5 bins per decade";
    if (h.not_positive) title += "; " + std::to_string(h.not_positive) + " rows with KLD 0 not shown";
    if (h.nonfinite) title += "; " + std::to_string(h.nonfinite) + " rows with NaN or inf logits not shown";
    g << "reset\nset title " << quote(title + ")") << "\n";
    uint64_t shown = 0;
    for (uint64_t c : h.counts) shown += c;
    if (shown == 0) {
        g << "set xrange [0:1]\nset yrange [0:1]\nunset xtics\nunset ytics\n"
          << "set label 1 'no row with a KLD above 0' at graph 0.5, graph 0.5 center\nplot 2 notitle\n";
    } else {
        g << "$hist << EOD\n";
        for (size_t i = 0; i < h.counts.size(); ++i)
            if (h.counts[i]) g << num(h.edges[i]) << " " << num(h.edges[i + 1]) << " " << h.counts[i] << "\n";
        g << "EOD\n";
        g << "set logscale xy\nset xlabel 'KLD (log scale)'\nset ylabel 'rows (log scale)'\nset grid\n"
          << "set xrange [" << num(h.edges.front()) << ":" << num(h.edges.back()) << "]\n"
          << "set yrange [0.7:*]\nset format x '%.0e'\nset style fill solid 0.5 border -1\n"
          << "plot $hist using (sqrt($1*$2)):3:1:2:(0.7):3 with boxxyerror lc 3 title 'rows per bin'\n";
    }
    g << "unset multiplot\n";
    return g.str();
}

void plot_diff(const DiffResult& r, const std::string& out) { plot::render_svg("--plot", diff_gnuplot(r), out, 1000, 800, {r.path_a, r.path_b}); }

}  // namespace bitgate::spkl
