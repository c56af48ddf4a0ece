// A toy family for engine tests: y[i] = x[i] + 1 over n floats. Tests give it models broken in
// the ways the engine must see, or mutants of their own, without registering anything.
#pragma once
#include <string>

#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"

namespace bitgate::toy {

inline FamilySpec family(HostModel model) {
    return FamilySpec{
        .name = "toy",
        .dims = {{.name = "n", .lo = 1, .hi = 64}},
        .tensors = {{.name = "x", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                     .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> b) { inputs::fill_f32(b, r, s["n"]); }},
                    {.name = "y", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; },
                     .decode = [](const Shape&, size_t off) { return "i=" + std::to_string(off / 4); }}},
        .profiles = {"uniform"},
        .variants = {{.name = "v", .model = std::move(model)}},
    };
}

inline Shape shape_n(int64_t n) { return Shape{{"n"}, {n}, "toy"}; }

inline void add_one(const Shape& s, const HostIo& io) {
    for (int64_t i = 0; i < s["n"]; ++i) io.output<float>("y")[i] = io.input<float>("x")[i] + 1.0f;
}

}  // namespace bitgate::toy
