#include "catalog.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "bitgate/inputs.hpp"
#include "errors.hpp"
#include "registry.hpp"

namespace bitgate {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) { out.push_back(cur); cur.clear(); }
        else cur += c;
    }
    out.push_back(cur);
    return out;
}

std::vector<std::string> words(const std::string& line) {
    std::istringstream is(line.substr(0, line.find('#')));
    std::vector<std::string> w;
    for (std::string t; is >> t;) w.push_back(t);
    return w;
}

CatalogLine parse_line(const FamilySpec& f, const std::vector<std::string>& w, const std::string& catalog,
                       const std::string& where) {
    CatalogLine line{.family = &f, .catalog = catalog, .where = where};
    std::vector<std::string> dims;
    for (const std::string& t : w) {
        if (t == "bench") { line.bench = true; continue; }
        const auto eq = t.find('=');
        const std::string key = t.substr(0, eq == std::string::npos ? t.size() : eq);
        const std::string val = eq == std::string::npos ? "" : t.substr(eq + 1);
        if (key == "seeds" || key == "seed") {
            line.seeds = parse_seeds(val, where);
        } else if (key == "profiles" || key == "profile") {
            for (const std::string& p : split(val, ','))
                if (!known_profile(f, p)) throw BadInput(where + ": unknown profile '" + p + "' for " + f.name);
                else line.profiles.push_back(p);
        } else if (key == "variants" || key == "variant") {
            for (const std::string& v : split(val, ',')) {
                try {
                    line.variants.push_back(variant(f, v).name);
                } catch (const BadInput& e) {  // the registry's message, placed at its line
                    throw BadInput(where + ": " + e.what());
                }
            }
        } else {
            dims.push_back(t);
        }
    }
    line.shape = parse_shape(f, dims, where);
    if (line.seeds.empty()) line.seeds = {1};
    if (line.profiles.empty()) line.profiles = f.profiles;
    return line;
}

std::ifstream open_catalog(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw BadInput(path + ": cannot open shape catalog");
    return in;
}

}  // namespace

bool known_profile(const FamilySpec& f, const std::string& p) {
    for (const auto& q : f.profiles)
        if (q == p) return true;
    return inputs::is_f32_profile(p) || p == "raw_q8";
}

std::vector<uint64_t> parse_seeds(const std::string& text, const std::string& where) {
    std::vector<uint64_t> out;
    auto num = [&](const std::string& s) {
        uint64_t x = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
        if (s.empty() || ec != std::errc() || p != s.data() + s.size())
            throw BadInput(where + ": seed '" + s + "' is not an integer from 0 to 18446744073709551615");
        return x;
    };
    for (const std::string& part : split(text, ',')) {
        const auto dash = part.find('-');
        if (dash == std::string::npos) {
            out.push_back(num(part));
        } else {
            const uint64_t a = num(part.substr(0, dash)), b = num(part.substr(dash + 1));
            if (b < a) throw BadInput(where + ": bad seed range '" + part + "': the end is below the start");
            if (b - a >= kMaxSeeds) throw BadInput(where + ": seed range '" + part + "' has more than " + std::to_string(kMaxSeeds) + " seeds");
            // Counted, not compared against b: a range ending at the largest seed must not wrap.
            for (uint64_t i = 0; i <= b - a; ++i) out.push_back(a + i);
        }
        if (out.size() > kMaxSeeds) throw BadInput(where + ": more than " + std::to_string(kMaxSeeds) + " seeds");
    }
    return out;
}

std::vector<CatalogLine> read_family_catalog(const FamilySpec& f, const std::string& path) {
    std::ifstream in = open_catalog(path);
    std::vector<CatalogLine> out;
    std::string catalog = "default", text;
    bool opt_in = false;
    for (int n = 1; std::getline(in, text); ++n) {
        const std::string where = path + ":" + std::to_string(n);
        const auto w = words(text);
        if (w.empty()) continue;
        if (w[0] == "@catalog") {
            if (w.size() == 3 && w[2] != "opt-in") throw BadInput(where + ": expected '@catalog NAME [opt-in]'");
            if (w.size() != 2 && w.size() != 3) throw BadInput(where + ": expected '@catalog NAME [opt-in]'");
            catalog = w[1];
            opt_in = w.size() == 3;
            continue;
        }
        if (w[0][0] == '@') throw BadInput(where + ": unknown directive '" + w[0] + "'");
        out.push_back(parse_line(f, w, catalog, where));
        out.back().opt_in = opt_in;
    }
    return out;
}

std::vector<CatalogLine> read_regressions(const std::string& path) {
    std::ifstream in(path);
    std::vector<CatalogLine> out;
    if (!in) return out;
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        const std::string where = path + ":" + std::to_string(n);
        auto w = words(text);
        if (w.empty()) continue;
        const FamilySpec* f = nullptr;
        try {
            f = &family(w[0]);
        } catch (const BadInput& e) {
            throw BadInput(where + ": " + e.what());
        }
        w.erase(w.begin());
        out.push_back(parse_line(*f, w, "regressions", where));
    }
    return out;
}

std::string catalog_line(const FamilySpec& f, const Shape& s, uint64_t seed, const std::string& profile) {
    return f.name + " " + s.str() + " seed=" + std::to_string(seed) + " profile=" + profile;
}

bool CatalogLine::own_seed(uint64_t seed) const {
    if (own_seeds.empty()) return true;
    for (uint64_t s : own_seeds)
        if (s == seed) return true;
    return false;
}

std::string CaseGroup::id() const { return catalog_line(*family, shape, seed, profile); }

std::vector<CaseGroup> expand(const CatalogLine& line, bool include_mutants) {
    const FamilySpec& f = *line.family;
    std::vector<const VariantSpec*> vs;
    for (const auto& v : f.variants) {
        if (v.mutant && !include_mutants) continue;
        if (!line.variants.empty() && !v.mutant) {
            bool named = false;
            for (const auto& n : line.variants) named |= n == v.name;
            if (!named) continue;
        }
        if (shape_problem(f, &v, line.shape).empty()) vs.push_back(&v);
    }
    std::vector<CaseGroup> out;
    for (uint64_t seed : line.seeds)
        for (const auto& p : line.profiles)
            out.push_back(CaseGroup{.family = &f, .catalog = line.catalog, .where = line.where, .shape = line.shape,
                                    .seed = seed, .profile = p, .variants = vs,
                                    .opt_in = line.opt_in, .own_seed = line.own_seed(seed)});
    return out;
}

}  // namespace bitgate
