// Golden files: golden/<family>.golden, one line per (family, variant, shape, seed, profile) with
// the xxh3-128 digest of every output, under a provenance header. Reading never writes.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bitgate/spec.hpp"

namespace bitgate {

using Digests = std::vector<std::pair<std::string, std::string>>;  // (output, hex), declared order

struct GoldenFile {
    std::string path;
    std::vector<std::string> header;              // provenance lines, without "# "
    std::map<std::string, Digests> lines;         // key: golden_key(...)
    std::map<std::string, std::string> where;     // key -> "path:line"
    bool exists = false;
};

std::string golden_key(const FamilySpec& f, const std::string& variant, const Shape& s, uint64_t seed,
                       const std::string& profile);
// The key with its seed taken out: the catalog case a line belongs to, whatever its seed.
std::string seedless_key(const std::string& key);
std::string golden_line(const std::string& key, const Digests& d);

// A missing file reads as empty (every case then reports golden_missing); a malformed one throws
// BadInput naming the file and line.
GoldenFile read_golden(const FamilySpec& f, const std::string& path);
// Writes the file with a fresh provenance header. Lines are written in the order given.
void write_golden(const FamilySpec& f, const std::string& path, const std::vector<std::pair<std::string, Digests>>& lines);

std::string provenance();  // "bitgate 0.1.0 commit abc compiler GNU 12.2.0"

}  // namespace bitgate
