// Shape catalogs: shapes/<family>.shapes (plain text, one case line per line, `# comments`,
// `@catalog NAME` sections) and shapes/regressions.shapes (each line starts with its family).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bitgate/spec.hpp"

namespace bitgate {

struct CatalogLine {
    const FamilySpec* family = nullptr;
    std::string catalog;                // section name; "regressions" for the regression file
    std::string where;                  // "shapes/x.shapes:12"
    Shape shape;
    std::vector<uint64_t> seeds;        // default {1}
    std::vector<std::string> profiles;  // default: the family's
    std::vector<std::string> variants;  // empty: every real variant valid for the shape
    bool bench = false;
    bool opt_in = false;                // from an `@catalog NAME opt-in` section: runs only when named
    std::vector<uint64_t> own_seeds;    // set when `seeds` was replaced (--seeds): the line's own
    bool own_seed(uint64_t seed) const; // a seed the line itself names (golden lines are kept for those)
};

// One (shape, seed, profile) of a family: every variant runs on the same inputs.
struct CaseGroup {
    const FamilySpec* family = nullptr;
    std::string catalog;
    std::string where;
    Shape shape;
    uint64_t seed = 1;
    std::string profile;
    std::vector<const VariantSpec*> variants;
    bool opt_in = false;  // no golden lines are kept for opt-in catalogs
    bool own_seed = true; // false: a seed from --seeds the catalog line does not name
    std::string id() const;  // "quantize_q8_0 k=896 seed=1 profile=uniform"
};

std::vector<CatalogLine> read_family_catalog(const FamilySpec& f, const std::string& path);
std::vector<CatalogLine> read_regressions(const std::string& path);  // a missing file is empty
// A catalog line in its own spelling, for printing a shrunk counterexample.
std::string catalog_line(const FamilySpec& f, const Shape& s, uint64_t seed, const std::string& profile);
// Seeds as "1,2,7" or "1-5", each from 0 to 2^64-1, at most kMaxSeeds in all.
inline constexpr uint64_t kMaxSeeds = 10000;
std::vector<uint64_t> parse_seeds(const std::string& text, const std::string& where);
bool known_profile(const FamilySpec& f, const std::string& p);

std::vector<CaseGroup> expand(const CatalogLine& line, bool include_mutants);

}  // namespace bitgate
