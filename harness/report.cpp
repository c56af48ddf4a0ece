#include "report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "bitgate_build_info.hpp"
#include "errors.hpp"
#include "outfile.hpp"

namespace bitgate {

Tally tally(const std::vector<Result>& rs) {
    Tally t;
    for (const Result& r : rs) {
        ++t.total;
        (r.where == "device" ? t.device : t.host)++;
        if (!r.passed()) ++t.failed;
        else if (r.verdict == Verdict::skipped) ++t.skipped;
        else if (r.verdict == Verdict::no_golden) ++t.no_golden;
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
    if (r.verdict == Verdict::ok || r.verdict == Verdict::skipped || r.verdict == Verdict::no_golden) return;
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
        if (it == out.end()) it = out.insert(out.end(), MutantTally{.name = name, .expect = r.expect, .racy = r.racy()});
        if (r.verdict == Verdict::skipped || r.verdict == Verdict::no_golden) ++it->skipped;
        else if (r.verdict == Verdict::ok) ++it->missed;
        else if (r.expects(r.verdict)) ++it->caught;
        else if (r.racy() && race_consequence(r.verdict)) ++it->consequence;
        else ++it->wrong;
    }
    return out;
}

bool print_mutant_summary(std::FILE* out, const std::vector<Result>& rs) {
    bool all = true;
    for (const MutantTally& m : mutant_summary(rs)) {
        const char* st = m.passed() ? "CAUGHT" : (m.caught + m.missed + m.wrong == 0) ? "SKIP" : "ESCAPED";
        if (!m.passed() && m.caught + m.missed + m.wrong > 0) all = false;
        std::fprintf(out, "mutant %-8s %-36s expected %-16s caught in %zu cases, wrong class in %zu, missed in %zu, skipped %zu",
                     st, m.name.c_str(), m.expect.c_str(), m.caught, m.wrong, m.missed, m.skipped);
        if (m.racy) std::fprintf(out, ", race consequence in %zu", m.consequence);
        std::fprintf(out, "\n");
    }
    return all;
}

void print_summary(std::FILE* out, const char* verb, const std::vector<Result>& rs, double seconds, const std::string& shard) {
    const Tally t = tally(rs);
    std::fprintf(out, "bitgate %s%s: %zu cases (%zu host, %zu device): %zu ok, %zu failed, %zu skipped", verb,
                 shard.empty() ? "" : (" shard " + shard).c_str(), t.total, t.host, t.device, t.ok, t.failed, t.skipped);
    if (t.no_golden) std::fprintf(out, ", %zu without a golden line for their seed", t.no_golden);
    std::fprintf(out, " in %.1f s\n", seconds);
}

void print_recap(std::FILE* out, const std::vector<Result>& rs) {
    const Tally t = tally(rs);
    if (!t.failed) return;
    std::fprintf(out, "%zu failed:\n", t.failed);
    for (const Result& r : rs)
        if (!r.passed()) std::fprintf(out, "  FAILED %-6s %s  %s\n", r.where.c_str(), r.case_id.c_str(), verdict_name(r.verdict));
}

namespace {

nlohmann::json to_json(const Result& r) {
    nlohmann::json diffs = nlohmann::json::array();
    for (const Difference& d : r.diffs)
        diffs.push_back({{"tensor", d.tensor}, {"verdict", verdict_name(d.verdict)}, {"bytes", d.bytes},
                         {"elements", d.elements}, {"first", d.first}});
    nlohmann::json j = {{"case", r.case_id}, {"family", r.family}, {"variant", r.variant}, {"where", r.where},
                        {"shape", r.shape}, {"seed", r.seed}, {"profile", r.profile},
                        {"catalog", r.catalog}, {"origin", r.origin}, {"verdict", verdict_name(r.verdict)},
                        {"passed", r.passed()}, {"ms", r.ms}, {"differences", diffs}};
    if (!r.note.empty()) j["note"] = r.note;
    if (r.mutant) j["mutant_expect"] = r.expect;
    if (r.order >= 0) j["order"] = r.order;
    return j;
}

// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 when s[i] does not start one.
size_t utf8_length(std::string_view s, size_t i) {
    const auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
    const unsigned c = at(0);
    const auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) { return at(k) >= lo && at(k) <= hi; };
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
    if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
    if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
    if (c >= 0xe1 && c <= 0xef) return cont(1) && cont(2) ? 3 : 0;
    if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

// Text for an XML attribute or element: markup escaped, and what XML 1.0 cannot hold (bytes that
// are not UTF-8, control characters other than tab, newline and return) as U+FFFD, so that a
// case id or an argument spelled in another encoding cannot make the report unreadable.
std::string xml(const std::string& s) {
    std::string o;
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_length(s, i);
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (n == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
            o += "\xef\xbf\xbd";
            i += n ? n : 1;
            continue;
        }
        switch (c) {
            case '&': o += "&amp;"; break;
            case '<': o += "&lt;"; break;
            case '>': o += "&gt;"; break;
            case '"': o += "&quot;"; break;
            default: o.append(s, i, n);
        }
        i += n;
    }
    return o;
}

}  // namespace

void check_writable(const std::string& path, const char* what, const std::vector<std::string>& inputs) {
    try {
        refuse_input_as_output(path, inputs);
    } catch (const BadInput& e) {
        throw BadInput(std::string(what) + " " + e.what());
    }
    // Opened for appending so that an existing report is not truncated before the run has made
    // its replacement; the real write truncates.
    std::ofstream f(path, std::ios::app);
    if (!f) throw BadInput(std::string(what) + " " + path + ": cannot open for writing");
}

void check_distinct_reports(const std::string& json, const std::string& junit) {
    refuse_outputs({{"--json", json}, {"--junit", junit}});
}

void write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& rs) {
    const Tally t = tally(rs);
    nlohmann::json j = {{"format", kJsonFormat},
                        {"bitgate", bitgate_version()},
                        {"build_commit", build_commit()},
                        {"verb", info.verb},
                        {"argv", info.argv},
                        {"device", info.device},
                        {"shard", info.shard.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.shard)},
                        {"summary", {{"total", t.total}, {"ok", t.ok}, {"failed", t.failed}, {"skipped", t.skipped},
                                     {"no_golden", t.no_golden}, {"host", t.host}, {"device", t.device},
                                     {"seconds", info.seconds}}},
                        {"results", nlohmann::json::array()}};
    for (const Result& r : rs) j["results"].push_back(to_json(r));
    // Whole or not at all (OutFile); an argument or a note that is not UTF-8 gets U+FFFD.
    write_file(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void write_junit(const std::string& path, const RunInfo& info, const std::vector<Result>& rs) {
    const char* verb = info.verb.c_str();
    const double seconds = info.seconds;
    std::map<std::string, std::vector<const Result*>> by_suite;
    for (const Result& r : rs) by_suite[r.family + "." + r.where].push_back(&r);
    const Tally t = tally(rs);
    std::ostringstream f;
    f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    f << "<testsuites name=\"bitgate " << verb << "\" tests=\"" << t.total << "\" failures=\"" << t.failed
      << "\" skipped=\"" << t.skipped << "\" time=\"" << seconds << "\">\n";
    for (const auto& [suite, list] : by_suite) {
        std::vector<Result> members;
        for (const Result* r : list) members.push_back(*r);
        const Tally s = tally(members);
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
    write_file(path, f.str());
}

const char* bitgate_version() { return BITGATE_VERSION_STRING; }
const char* build_commit() { return BITGATE_BUILD_COMMIT; }

}  // namespace bitgate
