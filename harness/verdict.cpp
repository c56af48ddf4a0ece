#include "verdict.hpp"

namespace bitgate {

namespace {
constexpr const char* kNames[] = {"ok", "skipped", "no_golden", "stale_on_reuse", "value_mismatch", "claim_mismatch",
                                  "golden_missing", "golden_mismatch", "unwritten", "input_modified",
                                  "out_of_bounds", "launch_error"};
}

const char* verdict_name(Verdict v) { return kNames[static_cast<int>(v)]; }

bool verdict_from_name(const std::string& s, Verdict& out) {
    for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
        if (s == kNames[i]) {
            out = static_cast<Verdict>(i);
            return true;
        }
    return false;
}

bool Result::expects(Verdict v) const {
    // "a|b": a mutant whose class depends on timing (a race) names each class it may produce.
    const std::string name = verdict_name(v);
    size_t start = 0;
    while (start <= expect.size()) {
        const size_t bar = expect.find('|', start);
        if (expect.substr(start, bar == std::string::npos ? std::string::npos : bar - start) == name) return true;
        if (bar == std::string::npos) break;
        start = bar + 1;
    }
    return false;
}

bool Result::racy() const { return mutant && expect.find('|') != std::string::npos; }

bool race_consequence(Verdict v) {
    return v == Verdict::unwritten || v == Verdict::value_mismatch || v == Verdict::stale_on_reuse;
}

bool Result::passed() const {
    // A mutant's case fails only when it is caught with the wrong class; whether it was caught at
    // all is judged over all its cases (mutant_summary).
    if (mutant)
        return verdict == Verdict::skipped || verdict == Verdict::ok || verdict == Verdict::no_golden || expects(verdict) ||
               (racy() && race_consequence(verdict));
    return verdict == Verdict::ok || verdict == Verdict::skipped || verdict == Verdict::no_golden;
}

}  // namespace bitgate
