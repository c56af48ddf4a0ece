#include "diff.hpp"

#include <cstdio>
#include <cstring>

namespace bitgate {

uint64_t ulp_distance(uint32_t a, uint32_t b) {
    auto ord = [](uint32_t u) -> int64_t {
        return (u & 0x80000000u) ? -static_cast<int64_t>(u & 0x7fffffffu) : static_cast<int64_t>(u);
    };
    const int64_t d = ord(a) - ord(b);
    return static_cast<uint64_t>(d < 0 ? -d : d);
}

namespace {

std::string hex_bytes(std::span<const uint8_t> b) {
    std::string s;
    char buf[4];
    for (uint8_t x : b) {
        std::snprintf(buf, sizeof buf, "%02x", x);
        s += buf;
    }
    return s;
}

std::string describe(const TensorSpec& t, const Shape& s, size_t elem, size_t esize,
                     std::span<const uint8_t> e, std::span<const uint8_t> a) {
    const size_t off = elem * esize;
    std::string where = t.decode ? t.decode(s, off) : "element " + std::to_string(elem);
    std::string line = t.name + " " + where + " (byte " + std::to_string(off) + "): expected " +
                       hex_bytes(e.subspan(off, esize)) + " actual " + hex_bytes(a.subspan(off, esize));
    if (t.elem == Elem::f32) {
        uint32_t ue, ua;
        float fe, fa;
        std::memcpy(&ue, e.data() + off, 4);
        std::memcpy(&ua, a.data() + off, 4);
        std::memcpy(&fe, &ue, 4);
        std::memcpy(&fa, &ua, 4);
        char buf[128];
        std::snprintf(buf, sizeof buf, " (%.9g vs %.9g, %llu ulp)", fe, fa,
                      static_cast<unsigned long long>(ulp_distance(ue, ua)));
        line += buf;
    }
    return line;
}

}  // namespace

Difference diff_bytes(const TensorSpec& t, const Shape& s, std::span<const uint8_t> expected,
                      std::span<const uint8_t> actual, Verdict verdict, size_t show) {
    Difference d{.tensor = t.name, .verdict = verdict};
    const size_t n = std::min(expected.size(), actual.size());
    if (n == expected.size() && n == actual.size() && std::memcmp(expected.data(), actual.data(), n) == 0) return d;
    const size_t esize = elem_size(t.elem);
    size_t last_elem = SIZE_MAX;
    for (size_t i = 0; i < n; ++i) {
        if (expected[i] == actual[i]) continue;
        ++d.bytes;
        const size_t elem = i / esize;
        if (elem == last_elem) continue;
        last_elem = elem;
        ++d.elements;
        // The element may run past a padded tail that is not a whole element: show what exists.
        if (d.first.size() < show && (elem + 1) * esize <= n) d.first.push_back(describe(t, s, elem, esize, expected, actual));
        else if (d.first.size() < show) d.first.push_back(t.name + " byte " + std::to_string(i) + ": expected " +
                                                          hex_bytes(expected.subspan(i, 1)) + " actual " + hex_bytes(actual.subspan(i, 1)));
    }
    if (expected.size() != actual.size()) {
        d.first.push_back(t.name + ": sizes differ (" + std::to_string(expected.size()) + " vs " + std::to_string(actual.size()) + " bytes)");
        d.bytes += expected.size() > actual.size() ? expected.size() - n : actual.size() - n;
    }
    return d;
}

}  // namespace bitgate
