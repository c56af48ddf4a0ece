#include "bench_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "errors.hpp"
#include "plot.hpp"

namespace bitgate {

namespace {

struct PeerLine {
    int line = 0;
    std::string family, shape, peer;
    double value = 0;
    bool percent = false;  // else a time per call, in microseconds
};

std::string trim(std::string s) {
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// "7.9%", "84.3us", "0.0843ms", "1.2e-5s": a finite number > 0 (a percent may be 0) and its unit.
bool parse_value(const std::string& v, PeerLine& p) {
    size_t used = 0;
    double x = 0;
    try {
        x = std::stod(v, &used);
    } catch (const std::exception&) {
        return false;
    }
    const std::string unit = trim(v.substr(used));
    if (!std::isfinite(x) || x < 0) return false;
    if (unit == "%") p.percent = true, p.value = x;
    else if (unit == "us") p.value = x;
    else if (unit == "ms") p.value = x * 1e3;
    else if (unit == "s") p.value = x * 1e6;
    else return false;
    return p.percent || x > 0;
}

std::vector<PeerLine> read_peer(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw BadInput(path + ": cannot open the peer file");
    std::vector<PeerLine> out;
    std::string line;
    for (int n = 1; std::getline(f, line); ++n) {
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        std::vector<std::string> cols;
        std::stringstream s(t);
        for (std::string c; std::getline(s, c, ',');) cols.push_back(trim(c));
        const std::string where = path + ":" + std::to_string(n) + ": ";
        if (cols.size() != 4)
            throw BadInput(where + "expected 'family,shape,peer,value', got " + std::to_string(cols.size()) + " fields");
        PeerLine p{.line = n, .family = cols[0], .shape = cols[1], .peer = cols[2]};
        if (p.family.empty() || p.shape.empty() || p.peer.empty()) throw BadInput(where + "an empty field");
        if (!parse_value(cols[3], p))
            throw BadInput(where + "value '" + cols[3] + "' is neither a percent (7.9%) nor a time per call (84.3us, 0.08ms)");
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace

std::map<std::string, double> parse_peaks(const std::vector<std::string>& specs) {
    std::map<std::string, double> out;
    for (const std::string& s : specs) {
        const auto eq = s.find('=');
        double v = 0;
        size_t used = 0;
        bool ok = eq != std::string::npos && eq > 0;
        try {
            if (ok) v = std::stod(s.substr(eq + 1), &used);
            ok = ok && used == s.size() - eq - 1 && std::isfinite(v) && v > 0;
        } catch (const std::exception&) {
            ok = false;
        }
        if (!ok) throw BadInput("--compute-peak '" + s + "': expected FAMILY=N with N > 0 in the family's unit (mmq_q8_0=1979)");
        out[s.substr(0, eq)] = v * 1e12;  // the bench's units (TOPS, TFLOPS) are 10^12 per second
    }
    return out;
}

namespace {

const nlohmann::json* number_at(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? &*it : nullptr;
}

std::string string_at(const nlohmann::json& row, const char* key, const std::string& where) {
    auto it = row.find(key);
    if (it == row.end() || !it->is_string()) throw BadInput(where + ": no '" + key + "' string");
    return it->get<std::string>();
}

}  // namespace

BenchPicture bench_picture(const nlohmann::json& bench, const std::string& source, const BenchPlotOptions& o) {
    BenchPicture p;
    p.compute_peaks = parse_peaks(o.compute_peaks);
    if (!bench.is_object() || !bench.contains("rows") || !bench["rows"].is_array())
        throw BadInput(source + ": no 'rows' array (not a file of bitgate bench --json)");
    if (auto* d = bench.is_object() && bench.contains("device") && bench["device"].is_string() ? &bench["device"] : nullptr)
        p.device = d->get<std::string>();
    if (auto* c = number_at(bench, "read_ceiling_gbps")) p.ceiling_gbps = c->get<double>();

    auto category = [&](const std::string& name) {
        auto it = std::find(p.categories.begin(), p.categories.end(), name);
        if (it != p.categories.end()) return size_t(it - p.categories.begin());
        p.categories.push_back(name);
        return p.categories.size() - 1;
    };
    auto series = [&](const std::string& name, bool peer) {
        for (size_t i = 0; i < p.series.size(); ++i)
            if (p.series[i] == name && p.peer_series[i] == peer) return i;
        p.series.push_back(name);
        p.peer_series.push_back(peer);
        return p.series.size() - 1;
    };
    // Per family and shape, what converts a peer's time: bytes, operations.
    std::map<std::string, std::pair<double, double>> work;
    std::vector<size_t> row_categories;

    size_t n = 0;
    for (const auto& row : bench["rows"]) {
        const std::string where = source + ": rows[" + std::to_string(n++) + "]";
        if (!row.is_object()) throw BadInput(where + ": not an object");
        const std::string family = string_at(row, "family", where), variant = string_at(row, "variant", where),
                          shape = string_at(row, "shape", where);
        if (auto* u = row.find("ops_unit") != row.end() && row["ops_unit"].is_string() ? &row["ops_unit"] : nullptr)
            if (!u->get<std::string>().empty()) p.ops_units[family] = u->get<std::string>();
        const double bytes = number_at(row, "bytes") ? row["bytes"].get<double>() : 0;
        const double ops = number_at(row, "ops") ? row["ops"].get<double>() : 0;
        work.emplace(family + " " + shape, std::make_pair(bytes, ops));
        const auto peak = p.compute_peaks.find(family);
        const size_t cat = category(family + " " + shape);
        // The timings a row holds: the row itself (one timing) or its two objects.
        std::vector<std::pair<std::string, const nlohmann::json*>> timings;
        if (row.contains("isolated") || row.contains("back_to_back")) {
            if (row.contains("isolated")) timings.emplace_back(variant, &row["isolated"]);
            if (row.contains("back_to_back")) timings.emplace_back(variant + " back-to-back", &row["back_to_back"]);
        } else {
            timings.emplace_back(variant, &row);
        }
        for (const auto& [name, t] : timings) {
            if (!t->is_object()) throw BadInput(where + ": '" + name + "' timing is not an object");
            if (t->contains("available") && (*t)["available"] == false) continue;
            double pct = NAN;
            if (peak != p.compute_peaks.end()) {
                if (auto* r = number_at(*t, "ops_per_s")) pct = r->get<double>() / peak->second * 100;
                else if (auto* us = number_at(*t, "median_us"); us && ops > 0) pct = ops / (us->get<double>() * 1e-6) / peak->second * 100;
            } else if (auto* c = number_at(*t, "pct_ceiling")) {
                pct = c->get<double>();
            }
            if (std::isfinite(pct)) p.points.push_back({cat, series(name, false), pct});
        }
    }
    for (const auto& [fam, peak] : p.compute_peaks) {
        (void)peak;
        bool seen = false;
        for (const auto& row : bench["rows"]) seen = seen || (row.contains("family") && row["family"] == fam);
        if (!seen) throw BadInput("--compute-peak " + fam + ": " + source + " has no row of that family");
    }

    if (!o.peer.empty())
        for (const PeerLine& l : read_peer(o.peer)) {
            const std::string key = l.family + " " + l.shape;
            double pct = l.value;
            if (!l.percent) {
                const auto w = work.find(key);
                if (w == work.end())
                    throw BadInput(o.peer + ":" + std::to_string(l.line) + ": a time needs a bench row of " + l.family +
                                   " at '" + l.shape + "' to convert it, and " + source + " has none");
                const auto peak = p.compute_peaks.find(l.family);
                const auto [bytes, ops] = w->second;
                if (peak != p.compute_peaks.end() && ops > 0) {
                    pct = ops / (l.value * 1e-6) / peak->second * 100;
                } else if (peak == p.compute_peaks.end() && p.ceiling_gbps > 0 && bytes > 0) {
                    pct = bytes / (l.value * 1e3) / p.ceiling_gbps * 100;  // bytes / us / 1e3 = GB/s
                } else {
                    throw BadInput(o.peer + ":" + std::to_string(l.line) + ": " + source + " gives no " +
                                   (peak != p.compute_peaks.end() ? "operations" : "bytes and read ceiling") +
                                   " to convert the time with");
                }
            }
            p.points.push_back({category(key), series(l.peer, true), pct});
        }
    if (p.points.empty()) throw BadInput(source + ": no row has a share of a ceiling to draw");
    return p;
}

std::string bench_gnuplot(const BenchPicture& p) {
    using plot::num;
    using plot::quote;
    std::ostringstream g;
    std::string title = p.device.empty() ? "bitgate bench" : "bitgate bench, " + p.device;
    title += ": share of the ceiling per shape and variant";
    g << "set title " << quote(title) << "\n";
    g << "set ylabel '% of the ceiling'\n";
    std::string notes = "% of the read ceiling";
    if (p.ceiling_gbps > 0) notes += " (" + num(std::round(p.ceiling_gbps)) + " GB/s, measured in the same run)";
    double top = 0;
    for (const auto& pt : p.points) top = std::max(top, pt.pct);
    g << "set yrange [0:" << (top <= 100 ? "105" : "*") << "]\n";
    g << "set grid ytics\nset key outside right top\n";
    // Category labels: families with a compute peak are marked, and the mark is explained below.
    size_t longest = 0;
    g << "set xtics rotate by -35 left nomirror (";
    for (size_t i = 0; i < p.categories.size(); ++i) {
        std::string label = p.categories[i];
        const std::string family = label.substr(0, label.find(' '));
        if (p.compute_peaks.count(family)) label += " *";
        longest = std::max(longest, label.size());
        g << (i ? ", " : "") << quote(label) << " " << i;
    }
    g << ")\n";
    g << "set xrange [-0.6:" << num(double(p.categories.size()) - 0.4) << "]\n";
    g << "set bmargin " << (5 + longest * 3 / 10) << "\n";
    std::string compute;
    for (const auto& [fam, peak] : p.compute_peaks) {
        const auto u = p.ops_units.find(fam);
        const std::string unit = u == p.ops_units.end() ? "x 10^12/s" : u->second;
        compute += (compute.empty() ? "; * % of the compute peak: " : ", ") + fam + " " + num(peak / 1e12) + " " + unit;
    }
    g << "set label 1 " << quote(notes + compute) << " at screen 0.01, screen 0.02 left\n";
    // The series a category has, side by side around its tick, so that equal values stay visible.
    const size_t ns = p.series.size();
    std::vector<std::vector<size_t>> present(p.categories.size());
    for (const auto& pt : p.points)
        if (std::find(present[pt.category].begin(), present[pt.category].end(), pt.series) == present[pt.category].end())
            present[pt.category].push_back(pt.series);
    auto offset = [&](const BenchPicture::Point& pt) {
        const auto& in = present[pt.category];
        const double k = double(std::find(in.begin(), in.end(), pt.series) - in.begin());
        const double step = std::min(0.15, 0.7 / double(in.size()));
        return (k - double(in.size() - 1) / 2) * step;
    };
    static const int filled[] = {7, 5, 9, 13, 11, 15};
    static const int open[] = {6, 4, 8, 12, 10, 14};
    size_t own = 0, peers = 0;
    std::string plots;
    for (size_t s = 0; s < ns; ++s) {
        g << "$s" << s << " << EOD\n";
        for (const auto& pt : p.points)
            if (pt.series == s) g << num(double(pt.category) + offset(pt)) << " " << num(pt.pct) << "\n";
        g << "EOD\n";
        plots += (s ? ", " : "") + std::string("$s") + std::to_string(s) + " using 1:2 with points ";
        if (p.peer_series[s])
            plots += "pt " + std::to_string(open[peers % 6]) + " ps 1.6 lw 2 lc rgb 'black' dt " + std::to_string(1 + peers / 6), ++peers;
        else
            plots += "pt " + std::to_string(filled[own % 6]) + " ps 1.3 lc " + std::to_string(1 + own % 8), ++own;
        plots += " title " + quote(p.series[s]);
    }
    g << "plot " << plots << "\n";
    return g.str();
}

void draw_bench(const nlohmann::json& bench, const std::string& source, const BenchPlotOptions& o,
                std::vector<std::string> inputs) {
    if (!o.peer.empty()) inputs.push_back(o.peer);
    const BenchPicture p = bench_picture(bench, source, o);
    const int width = std::max(900, 240 + int(p.categories.size()) * 70);
    size_t longest = 0;
    for (const auto& c : p.categories) longest = std::max(longest, c.size());
    const int height = 520 + int(longest) * 4;
    plot::render_svg("--plot", bench_gnuplot(p), o.out, width, height, inputs);
}

void add_bench_plot_options(CLI::App& bench, BenchPlotOptions& o) {
    bench.add_option("--plot", o.out, "also draw the % of the ceiling per shape and variant as SVG (needs gnuplot)");
    bench.add_option("--peer", o.peer, "a peer's figures to draw beside them: lines 'family,shape,peer,value' (value 7.9% or 84.3us)");
    bench.add_option("--compute-peak", o.compute_peaks, "FAMILY=N: draw that family as % of N (its ops unit, e.g. mmq_q8_0=1979 TOPS)")
        ->delimiter(',');
}

void check_bench_plot(const BenchPlotOptions& o, bool verb) {
    if (o.out.empty()) {
        if (!o.peer.empty() || !o.compute_peaks.empty()) throw BadInput("--peer and --compute-peak only go with --plot");
        return;
    }
    plot::require_gnuplot(verb ? "bench plot" : "--plot");
    plot::require_writable(verb ? "--out" : "--plot", o.out);
    parse_peaks(o.compute_peaks);
    if (!o.peer.empty()) read_peer(o.peer);
}

CLI::App* add_bench_plot_verb(CLI::App& bench, int& rc) {
    struct Args {
        std::string json;
        BenchPlotOptions o;
    };
    auto a = std::make_shared<Args>();
    CLI::App* c = bench.add_subcommand("plot", "draw a saved bench JSON (bench --json) as SVG, no GPU needed (needs gnuplot)");
    c->add_option("json", a->json, "the JSON bench --json wrote")->required();
    c->add_option("--out", a->o.out, "the SVG to write")->required();
    c->add_option("--peer", a->o.peer, "a peer's figures: lines 'family,shape,peer,value' (value 7.9% or 84.3us)");
    c->add_option("--compute-peak", a->o.compute_peaks, "FAMILY=N: draw that family as % of N (its ops unit)")->delimiter(',');
    c->callback([a, &rc] {
        check_bench_plot(a->o, true);  // the JSON is read after: its errors name it
        std::ifstream f(a->json);
        if (!f) throw BadInput(a->json + ": cannot open");
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(f);
        } catch (const nlohmann::json::exception& e) {
            throw BadInput(a->json + ": not JSON (" + std::string(e.what()) + ")");
        }
        draw_bench(j, a->json, a->o, {a->json});
        std::printf("%s: drawn from %s\n", a->o.out.c_str(), a->json.c_str());
        rc = 0;
    });
    return c;
}

}  // namespace bitgate
