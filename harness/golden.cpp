#include "golden.hpp"

#include <ctime>
#include <fstream>
#include <sstream>

#include "bitgate_build_info.hpp"
#include "errors.hpp"
#include "outfile.hpp"
#include "registry.hpp"

#ifndef BITGATE_VERSION
#define BITGATE_VERSION "unknown"
#define BITGATE_COMPILER "unknown"
#endif

namespace bitgate {

std::string golden_key(const FamilySpec& f, const std::string& variant, const Shape& s, uint64_t seed,
                       const std::string& profile) {
    return f.name + " " + variant + " " + s.str() + " seed=" + std::to_string(seed) + " profile=" + profile;
}

std::string seedless_key(const std::string& key) {
    const auto a = key.find(" seed=");
    if (a == std::string::npos) return key;
    const auto b = key.find(' ', a + 1);
    return key.substr(0, a) + (b == std::string::npos ? "" : key.substr(b));
}

std::string golden_line(const std::string& key, const Digests& d) {
    std::string s = key;
    for (const auto& [name, hex] : d) s += " " + name + "=" + hex;
    return s;
}

namespace {

bool is_hex128(const std::string& s) {
    if (s.size() != 32) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

}  // namespace

std::string provenance() {
    // The commit the binary was built from (configure time), not that of whatever tree it runs in.
    return std::string("bitgate ") + BITGATE_VERSION + ", commit " + BITGATE_BUILD_COMMIT + ", compiler " + BITGATE_COMPILER;
}

GoldenFile read_golden(const FamilySpec& f, const std::string& path) {
    GoldenFile g{.path = path};
    std::ifstream in(path);
    if (!in) return g;
    g.exists = true;
    std::vector<std::string> outputs;
    for (const auto& t : f.tensors)
        if (t.role == Role::output) outputs.push_back(t.name);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        const std::string where = path + ":" + std::to_string(n);
        if (text.empty()) continue;
        if (text[0] == '#') {
            g.header.push_back(text.size() > 2 ? text.substr(2) : "");
            continue;
        }
        std::istringstream is(text);
        std::vector<std::string> w;
        for (std::string t; is >> t;) w.push_back(t);
        if (w.size() < 2 || w[0] != f.name)
            throw BadInput(where + ": expected a line starting with '" + f.name + " VARIANT', got '" + text.substr(0, 60) + "'");
        std::vector<std::string> dims;
        uint64_t seed = 0;
        std::string profile;
        bool have_seed = false;
        Digests d;
        for (size_t i = 2; i < w.size(); ++i) {
            const auto eq = w[i].find('=');
            if (eq == std::string::npos) throw BadInput(where + ": expected key=value, got '" + w[i] + "'");
            const std::string key = w[i].substr(0, eq), val = w[i].substr(eq + 1);
            if (key == "seed") {
                try { seed = std::stoull(val); have_seed = true; } catch (...) { throw BadInput(where + ": bad seed '" + val + "'"); }
            } else if (key == "profile") {
                profile = val;
            } else if (tensor(f, key) && tensor(f, key)->role == Role::output) {
                if (!is_hex128(val)) throw BadInput(where + ": digest of " + key + " is not 32 lowercase hex digits");
                d.emplace_back(key, val);
            } else {
                dims.push_back(w[i]);
            }
        }
        if (!have_seed || profile.empty()) throw BadInput(where + ": missing seed= or profile=");
        if (d.size() != outputs.size()) throw BadInput(where + ": expected a digest for each output of " + f.name);
        const Shape s = parse_shape(f, dims, where);
        const std::string key = golden_key(f, w[1], s, seed, profile);
        if (g.lines.count(key)) throw BadInput(where + ": duplicate line for " + key);
        g.lines[key] = d;
        g.where[key] = where;
    }
    return g;
}

void write_golden(const FamilySpec& f, const std::string& path, const std::vector<std::pair<std::string, Digests>>& lines) {
    std::ostringstream out;
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    out << "# bitgate golden v1: xxh3-128 (canonical hex) of every output of the host model\n";
    out << "# family: " << f.name << "\n";
    out << "# generated-by: " << provenance() << "\n";
    out << "# date: " << date << "\n";
    for (const auto& [key, d] : lines) out << golden_line(key, d) << "\n";
    write_file(path, out.str());  // whole or not at all: a failed write keeps the old goldens
}

}  // namespace bitgate
