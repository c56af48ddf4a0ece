#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "errors.hpp"

namespace bitgate {

Tally tally(const std::vector<Result>& rs) {
    Tally t;
    for (const Result& r : rs) {
        ++t.total;
        (r.where == "device" ? t.device : t.host)++;
        if (!r.passed()) ++t.failed;
        else if (r.verdict == Verdict::skipped) ++t.skipped;
        else ++t.ok;
    }
    return t;
}

namespace {

const char* status(const Result& r) {
    if (r.verdict == Verdict::skipped) return "SKIP";
    if (r.mutant) return r.verdict == Verdict::ok ? "MISSED" : r.passed() ? "CAUGHT" : "WRONG";
    return r.passed() ? "OK" : "FAIL";
}

}  // namespace

void print_result(std::FILE* out, const Result& r) {
    std::fprintf(out, "%-6s %-6s %s", status(r), r.where.c_str(), r.case_id.c_str());
    if (r.mutant) std::fprintf(out, "  [mutant: %s, expected %s]", verdict_name(r.verdict), r.expect.c_str());
    else if (r.verdict != Verdict::ok) std::fprintf(out, "  %s", verdict_name(r.verdict));
    if (!r.note.empty() && (r.verdict != Verdict::ok)) std::fprintf(out, "  (%s)", r.note.c_str());
    std::fprintf(out, "\n");
    if (r.verdict == Verdict::ok || r.verdict == Verdict::skipped) return;
    if (r.passed() && !r.mutant) return;
    if (!r.origin.empty()) std::fprintf(out, "         case from %s\n", r.origin.c_str());
    for (const Difference& d : r.diffs) {
        if (d.bytes || d.elements)
            std::fprintf(out, "         %s: %s, %zu bytes in %zu elements differ\n", d.tensor.c_str(),
                         verdict_name(d.verdict), d.bytes, d.elements);
        else
            std::fprintf(out, "         %s: %s\n", d.tensor.c_str(), verdict_name(d.verdict));
        for (const std::string& line : d.first) std::fprintf(out, "           %s\n", line.c_str());
    }
}

std::vector<MutantTally> mutant_summary(const std::vector<Result>& rs) {
    std::vector<MutantTally> out;
    for (const Result& r : rs) {
        if (!r.mutant) continue;
        const std::string name = r.family + "/" + r.variant;
        auto it = std::find_if(out.begin(), out.end(), [&](const MutantTally& m) { return m.name == name; });
        if (it == out.end()) it = out.insert(out.end(), MutantTally{.name = name, .expect = r.expect});
        if (r.verdict == Verdict::skipped) ++it->skipped;
        else if (r.verdict == Verdict::ok) ++it->missed;
        else if (r.expects(r.verdict)) ++it->caught;
        else ++it->wrong;
    }
    return out;
}

bool print_mutant_summary(std::FILE* out, const std::vector<Result>& rs) {
    bool all = true;
    for (const MutantTally& m : mutant_summary(rs)) {
        const char* st = m.passed() ? "CAUGHT" : (m.caught + m.missed + m.wrong == 0) ? "SKIP" : "ESCAPED";
        if (!m.passed() && m.caught + m.missed + m.wrong > 0) all = false;
        std::fprintf(out, "mutant %-8s %-36s expected %-16s caught in %zu cases, wrong class in %zu, missed in %zu, skipped %zu\n",
                     st, m.name.c_str(), m.expect.c_str(), m.caught, m.wrong, m.missed, m.skipped);
    }
    return all;
}

void print_summary(std::FILE* out, const char* verb, const std::vector<Result>& rs, double seconds) {
    const Tally t = tally(rs);
    std::fprintf(out, "bitgate %s: %zu cases (%zu host, %zu device): %zu ok, %zu failed, %zu skipped in %.1f s\n", verb,
                 t.total, t.host, t.device, t.ok, t.failed, t.skipped, seconds);
}

namespace {

nlohmann::json to_json(const Result& r) {
    nlohmann::json diffs = nlohmann::json::array();
    for (const Difference& d : r.diffs)
        diffs.push_back({{"tensor", d.tensor}, {"verdict", verdict_name(d.verdict)}, {"bytes", d.bytes},
                         {"elements", d.elements}, {"first", d.first}});
    nlohmann::json j = {{"case", r.case_id}, {"family", r.family}, {"variant", r.variant}, {"where", r.where},
                        {"catalog", r.catalog}, {"origin", r.origin}, {"verdict", verdict_name(r.verdict)},
                        {"passed", r.passed()}, {"ms", r.ms}, {"differences", diffs}};
    if (!r.note.empty()) j["note"] = r.note;
    if (r.mutant) j["mutant_expect"] = r.expect;
    return j;
}

std::ofstream open_out(const std::string& path) {
    std::ofstream f(path);
    if (!f) throw BadInput(path + ": cannot write report");
    return f;
}

std::string xml(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o += c;
        }
    }
    return o;
}

}  // namespace

void write_json(const std::string& path, const char* verb, const std::vector<Result>& rs, double seconds) {
    const Tally t = tally(rs);
    nlohmann::json j = {{"verb", verb},
                        {"summary", {{"total", t.total}, {"ok", t.ok}, {"failed", t.failed}, {"skipped", t.skipped},
                                     {"host", t.host}, {"device", t.device}, {"seconds", seconds}}},
                        {"results", nlohmann::json::array()}};
    for (const Result& r : rs) j["results"].push_back(to_json(r));
    open_out(path) << j.dump(1) << "\n";
}

void write_junit(const std::string& path, const char* verb, const std::vector<Result>& rs, double seconds) {
    std::map<std::string, std::vector<const Result*>> by_suite;
    for (const Result& r : rs) by_suite[r.family + "." + r.where].push_back(&r);
    const Tally t = tally(rs);
    std::ofstream f = open_out(path);
    f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    f << "<testsuites name=\"bitgate " << verb << "\" tests=\"" << t.total << "\" failures=\"" << t.failed
      << "\" skipped=\"" << t.skipped << "\" time=\"" << seconds << "\">\n";
    for (const auto& [suite, list] : by_suite) {
        const Tally s = [&] { std::vector<Result> v; for (auto* r : list) v.push_back(*r); return tally(v); }();
        f << " <testsuite name=\"" << xml(suite) << "\" tests=\"" << s.total << "\" failures=\"" << s.failed
          << "\" skipped=\"" << s.skipped << "\">\n";
        for (const Result* r : list) {
            f << "  <testcase classname=\"" << xml(suite) << "\" name=\"" << xml(r->case_id) << "\" time=\"" << r->ms / 1000 << "\"";
            if (r->passed() && r->verdict != Verdict::skipped) { f << "/>\n"; continue; }
            f << ">\n";
            if (!r->passed()) {
                std::string body;
                for (const Difference& d : r->diffs) {
                    body += d.tensor + ": " + verdict_name(d.verdict) + "\n";
                    for (const auto& l : d.first) body += "  " + l + "\n";
                }
                f << "   <failure message=\"" << xml(verdict_name(r->verdict)) << "\">" << xml(body + r->note) << "</failure>\n";
            } else {
                f << "   <skipped message=\"" << xml(r->note) << "\"/>\n";
            }
            f << "  </testcase>\n";
        }
        f << " </testsuite>\n";
    }
    f << "</testsuites>\n";
}

Progress::Progress() : on(isatty(2) && !std::getenv("CI")) {}

void Progress::operator()(size_t done, size_t total, const std::string& current) const {
    if (!on) return;
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s", done, total, current.substr(0, 100).c_str());
    std::fflush(stderr);
}

void Progress::clear() const {
    if (on) std::fprintf(stderr, "\r\033[K");
}

}  // namespace bitgate
