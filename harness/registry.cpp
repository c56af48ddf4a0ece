#include "registry.hpp"

#include <charconv>
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

std::string shape_problem(const FamilySpec& f, const VariantSpec* v, const Shape& s) {
    for (size_t i = 0; i < s.values.size(); ++i)
        if (s.values[i] < 0) return s.names[i] + " must not be negative";
    if (f.valid) {
        if (std::string why = f.valid(s); !why.empty()) return why;
    }
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
