#include "registry.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "errors.hpp"

namespace bitgate {

std::vector<const FamilySpec*> families() {
    std::vector<const FamilySpec*> out;
    for (const auto& [name, f] : registry())
        if (f.declared()) out.push_back(&f);
    return out;
}

const FamilySpec& family(const std::string& name) {
    auto it = registry().find(name);
    if (it == registry().end() || !it->second.declared()) {
        std::string known;
        for (const FamilySpec* f : families()) known += (known.empty() ? "" : ", ") + f->name;
        throw BadInput("unknown family '" + name + "' (known: " + known + ")");
    }
    return it->second;
}

const VariantSpec& variant(const FamilySpec& f, const std::string& name) {
    for (const auto& v : f.variants)
        if (v.name == name) return v;
    std::string known;
    for (const auto& v : f.variants) known += (known.empty() ? "" : ", ") + v.name;
    throw BadInput("family " + f.name + " has no variant '" + name + "' (known: " + known + ")");
}

std::vector<const VariantSpec*> real_variants(const FamilySpec& f) {
    std::vector<const VariantSpec*> out;
    for (const auto& v : f.variants)
        if (!v.mutant) out.push_back(&v);
    return out;
}

size_t mutants_linked() {
    size_t n = 0;
    for (const FamilySpec* f : families())
        for (const VariantSpec& v : f->variants) n += v.mutant;
    return n;
}

const HostModel& model_of(const FamilySpec& f, const VariantSpec& v) {
    if (v.model) return v.model;
    if (v.mutant && !v.golden_as.empty() && v.golden_as != v.name) return model_of(f, variant(f, v.golden_as));
    throw std::logic_error(f.name + "/" + v.name + " has no host model");
}

const TensorSpec* tensor(const FamilySpec& f, const std::string& name) {
    for (const auto& t : f.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

uint64_t max_case_bytes() {
    constexpr uint64_t fallback = uint64_t(16) << 30;
    const char* env = std::getenv("BITGATE_MAX_CASE_BYTES");
    if (!env || !*env) return fallback;
    uint64_t x = 0;
    const char* end = env + std::strlen(env);
    auto [p, ec] = std::from_chars(env, end, x);
    if (ec != std::errc() || p != end || x == 0)
        throw BadInput("BITGATE_MAX_CASE_BYTES=" + std::string(env) + ": not a positive byte count");
    return x;
}

std::optional<uint64_t> case_bytes(const FamilySpec& f, const Shape& s) {
    uint64_t total = 0;
    for (const auto& t : f.tensors)
        if (__builtin_add_overflow(total, uint64_t(t.bytes(s)), &total)) return std::nullopt;
    return total;
}

namespace {

// Limits the engine holds every family to, checked before any family code sees the shape.
std::string size_problem(const FamilySpec& f, const Shape& s) {
    uint64_t product = 1;
    for (size_t i = 0; i < s.values.size(); ++i) {
        if (s.values[i] < 0) return s.names[i] + " must not be negative";
        int64_t max = kDimMax;
        for (const Dim& d : f.dims)
            if (d.name == s.names[i] && d.max > 0) max = d.max;
        if (s.values[i] > max)
            return s.names[i] + "=" + std::to_string(s.values[i]) + " is above its limit " + std::to_string(max);
        if (__builtin_mul_overflow(product, uint64_t(std::max<int64_t>(s.values[i], 1)), &product) ||
            product > kDimProductMax)
            return "the dimensions multiply to more than 2^60";
    }
    return "";
}

}  // namespace

std::string shape_problem(const FamilySpec& f, const VariantSpec* v, const Shape& s) {
    if (std::string why = size_problem(f, s); !why.empty()) return why;
    if (f.valid) {
        if (std::string why = f.valid(s); !why.empty()) return why;
    }
    // Byte formulas may rely on the family's validity (a dimension that divides another), so the
    // buffer total is taken only for a shape the family accepts.
    const auto total = case_bytes(f, s);
    if (!total || *total > max_case_bytes())
        return "its buffers take " + (total ? std::to_string(*total) : std::string("more than 2^64")) +
               " bytes, more than the limit of " + std::to_string(max_case_bytes()) +
               " (BITGATE_MAX_CASE_BYTES)";
    if (v && v->valid) return v->valid(s);
    return "";
}

Shape parse_shape(const FamilySpec& f, const std::vector<std::string>& tokens, const std::string& where) {
    Shape s;
    s.family = f.name;
    for (const Dim& d : f.dims) {
        s.names.push_back(d.name);
        s.values.push_back(-1);
    }
    for (const std::string& tok : tokens) {
        const auto eq = tok.find('=');
        if (eq == std::string::npos) throw BadInput(where + ": expected key=value, got '" + tok + "'");
        const std::string key = tok.substr(0, eq), val = tok.substr(eq + 1);
        size_t i = 0;
        while (i < s.names.size() && s.names[i] != key) ++i;
        if (i == s.names.size()) throw BadInput(where + ": " + f.name + " has no dimension '" + key + "'");
        int64_t x = 0;
        auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), x);
        if (ec != std::errc() || p != val.data() + val.size() || x < 0)
            throw BadInput(where + ": " + key + "=" + val + " is not a non-negative integer");
        s.values[i] = x;
    }
    for (size_t i = 0; i < s.names.size(); ++i)
        if (s.values[i] < 0) throw BadInput(where + ": missing dimension " + s.names[i] + " for " + f.name);
    if (std::string why = shape_problem(f, nullptr, s); !why.empty())
        throw BadInput(where + ": impossible shape " + s.str() + " for " + f.name + ": " + why);
    return s;
}

}  // namespace bitgate
