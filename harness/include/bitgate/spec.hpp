// The kernel spec: everything the engine needs to know about a family, as data.
//
// A family registers itself once (specs/<family>.cpp, with BITGATE_FAMILY): its dimensions,
// tensors, generators, decoders, profiles, and variants, each with its host model (refimpl/) and
// its device launcher (kernels/, compiled only where CUDA is built). Catalogs, goldens, property
// search, device diffs, claims, bench and reports are generic over this description, so adding a
// family never edits the engine.
//
// Plain C++ only; the registry lives here (inline, function-local statics) so that the specs and
// the mutants register without linking against the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bitgate {

// ---------------------------------------------------------------------------------------------
// Shapes: named integer dimensions, in the order the family declares them.

struct Shape {
    std::vector<std::string> names;
    std::vector<int64_t> values;
    std::string family;  // whose dimensions these are, for the error below

    // A dimension the family never declared is a programming error, reported where it is asked.
    int64_t operator[](std::string_view name) const {
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) return values[i];
        throw std::logic_error((family.empty() ? std::string("a shape") : family) + " has no dimension '" +
                               std::string(name) + "' (shape: " + str() + ")");
    }
    // "n=3325 d=3584", the catalog spelling.
    std::string str() const {
        std::string s;
        for (size_t i = 0; i < names.size(); ++i)
            s += (i ? " " : "") + names[i] + "=" + std::to_string(values[i]);
        return s;
    }
};

// How the property search draws one dimension: uniformly in [lo, hi] in steps of `multiple`,
// or one of `edges` (dispatch boundaries, ragged tails) a quarter of the time. An edge may lie
// past `hi`: a boundary whose shapes are too large to draw uniformly around. `at_least` names an
// earlier dimension this one is raised to when drawn below it (attention's ctx >= L), so shapes
// that need both large are drawn, not discarded as invalid.
//
// `max` is the largest value a catalog line or `--shape` may give (0: the engine's default,
// kDimMax, the int32 range the kernels index in). The engine also rejects a shape whose
// dimensions multiply past kDimProductMax or whose buffers together exceed the case-size limit
// (harness/registry.hpp), before any family code computes a size: no family formula can overflow.
struct Dim {
    std::string name;
    int64_t lo = 1;
    int64_t hi = 1;
    int64_t multiple = 1;
    std::vector<int64_t> edges;
    std::string doc;  // one line for `bitgate list`
    std::string at_least;
    int64_t max = 0;
};

inline constexpr int64_t kDimMax = 2147483647;                // INT32_MAX
inline constexpr uint64_t kDimProductMax = uint64_t(1) << 60;  // leaves a factor of 8 for per-element bytes in int64; positions (pos0, ctx) count as factors too

// ---------------------------------------------------------------------------------------------
// Tensors.

enum class Role { input, output, workspace };

// Element type, used to decode differences (hex, ulp distance) and to read .npy files.
enum class Elem { u8, i8, u16, f16, u32, i32, f32, q8_0 };

inline size_t elem_size(Elem e) {
    switch (e) {
        case Elem::u8: case Elem::i8: return 1;
        case Elem::u16: case Elem::f16: return 2;
        case Elem::u32: case Elem::i32: case Elem::f32: return 4;
        case Elem::q8_0: return 34;
    }
    return 1;
}

// What an input generator sees. Every byte it writes must be a pure function of
// (seed, profile, tensor name, shape, byte position): helpers in bitgate/inputs.hpp.
struct GenRequest {
    uint64_t seed = 0;
    std::string_view profile;
    std::string_view tensor;
};

struct TensorSpec {
    std::string name;
    Role role = Role::input;
    Elem elem = Elem::u8;
    // Full byte size, including padding the kernel must write.
    std::function<size_t(const Shape&)> bytes;
    // Inputs: fill the buffer. Outputs and workspaces: unused.
    std::function<void(const Shape&, const GenRequest&, std::span<uint8_t>)> generate;
    // Byte offset -> named coordinates, e.g. "row 7 block 3 qs[12]". Empty: the engine prints
    // the element index.
    std::function<std::string(const Shape&, size_t offset)> decode;
    // Elements per axis, C order (e.g. {n, k}), for the .npy files `run` writes. Empty: the engine
    // writes one axis (Q8_0 tensors: blocks x 34 bytes); ignored when it disagrees with `bytes`.
    std::function<std::vector<int64_t>(const Shape&)> dims;
};

// ---------------------------------------------------------------------------------------------
// Host models and device launchers reach their tensors by the names the family's tensor list
// declares, so the list is the only place that says which buffer is which. The engine fills the
// buffers in the declared order, split by role; asking for a name the family never declared (or
// declared with another role) throws std::logic_error naming family, role and tensor.

struct FamilySpec;
size_t tensor_slot(const FamilySpec* f, Role role, std::string_view name);

struct HostIo {
    const FamilySpec* family = nullptr;
    std::vector<std::span<const uint8_t>> in;
    std::vector<std::span<uint8_t>> out;
    std::vector<std::span<uint8_t>> work;

    template <class T> const T* input(std::string_view name) const {
        return reinterpret_cast<const T*>(in[tensor_slot(family, Role::input, name)].data());
    }
    template <class T> T* output(std::string_view name) const {
        return reinterpret_cast<T*>(out[tensor_slot(family, Role::output, name)].data());
    }
    template <class T> T* workspace(std::string_view name) const {
        return reinterpret_cast<T*>(work[tensor_slot(family, Role::workspace, name)].data());
    }
    std::span<uint8_t> output_bytes(std::string_view name) const { return out[tensor_slot(family, Role::output, name)]; }
    // A position (the old spelling, `input<float>(0)`) would convert to a null name: refused here.
    template <class T> const T* input(std::nullptr_t) const = delete;
    template <class T> T* output(std::nullptr_t) const = delete;
    template <class T> T* workspace(std::nullptr_t) const = delete;
};

struct DeviceIo {
    const FamilySpec* family = nullptr;
    std::vector<const void*> in;
    std::vector<void*> out;
    std::vector<void*> work;
    void* stream = nullptr;  // a cudaStream_t

    template <class T> const T* input(std::string_view name) const {
        return static_cast<const T*>(in[tensor_slot(family, Role::input, name)]);
    }
    template <class T> T* output(std::string_view name) const {
        return static_cast<T*>(out[tensor_slot(family, Role::output, name)]);
    }
    template <class T> T* workspace(std::string_view name) const {
        return static_cast<T*>(work[tensor_slot(family, Role::workspace, name)]);
    }
    template <class T> const T* input(std::nullptr_t) const = delete;
    template <class T> T* output(std::nullptr_t) const = delete;
    template <class T> T* workspace(std::nullptr_t) const = delete;
};

using HostModel = std::function<void(const Shape&, const HostIo&)>;
// Enqueues the variant's work on io.stream and returns how many kernel launches it made (the
// benchmark reports launches per call). Errors are read by the engine from the CUDA runtime.
using DeviceLauncher = std::function<int(const Shape&, const DeviceIo&)>;

struct VariantSpec {
    std::string name;
    std::string summary;
    HostModel model;
    // Extra validity beyond the family's (e.g. fused4 needs g == 4): "" when valid, else why not.
    std::function<std::string(const Shape&)> valid;
    // Variants naming the same claim promise the same bytes for every output on every shape
    // valid for both; the engine checks it on host models and on the device.
    std::string claim;
    // Mutants (test-only): the verdict class the engine must report, and the variant whose golden
    // lines this one is held to.
    bool mutant = false;
    std::string expect;
    std::string golden_as;
    // The device launcher, and an optional preparation (a hoisted quantization, say): the engine
    // runs the preparation before every launch it checks, and the benchmark runs it once per
    // buffer set, untimed, so that time and launches per call are those of the call a caller
    // repeats. Empty where CUDA is not built (BITGATE_ON_DEVICE) or the variant has no kernel.
    DeviceLauncher launch;
    DeviceLauncher prepare;
};

// A kernel mutant: the kernel (or launcher) is what is wrong, so the bytes it must produce are
// those of the variant it imitates. Its model is left empty; the engine uses the imitated one's.
// `launch` is its defective launcher (BITGATE_ON_DEVICE(...)).
inline VariantSpec kernel_mutant(std::string imitates, std::string name, std::string expect, std::string what,
                                 DeviceLauncher launch, std::function<std::string(const Shape&)> valid = {}) {
    return VariantSpec{.name = std::move(name), .summary = std::move(what), .valid = std::move(valid),
                       .mutant = true, .expect = std::move(expect), .golden_as = std::move(imitates),
                       .launch = std::move(launch)};
}

struct FamilySpec {
    std::string name;
    std::string summary;
    std::vector<Dim> dims;
    // "" when the shape is valid, else a reason naming the dimension ("k must be a multiple of 32").
    std::function<std::string(const Shape&)> valid;
    std::vector<TensorSpec> tensors;
    // Profiles a catalog line runs when it names none.
    std::vector<std::string> profiles;
    std::vector<VariantSpec> variants;
    // Benchmark accounting; empty: bytes of inputs plus outputs, no operation count.
    std::function<double(const Shape&)> bytes_moved;
    std::function<double(const Shape&)> ops;
    std::string ops_unit;  // e.g. "TOPS" for int8 MACs counted as 2 ops

    // False for an entry that only mutants have named so far.
    bool declared() const { return !dims.empty(); }
};

inline size_t tensor_slot(const FamilySpec* f, Role role, std::string_view name) {
    static constexpr const char* roles[] = {"input", "output", "workspace"};
    if (!f) throw std::logic_error("tensor '" + std::string(name) + "' asked of buffers that name no family");
    size_t i = 0;
    for (const TensorSpec& t : f->tensors) {
        if (t.role != role) continue;
        if (t.name == name) return i;
        ++i;
    }
    throw std::logic_error(f->name + " declares no " + roles[int(role)] + " tensor '" + std::string(name) + "'");
}

// ---------------------------------------------------------------------------------------------
// Registry. Static registration from any translation unit, in any order: a family, its device
// launchers and extra (mutant) variants may arrive before or after one another.

inline std::map<std::string, FamilySpec>& registry() {
    static std::map<std::string, FamilySpec> families;
    return families;
}

inline bool register_family(FamilySpec spec) {
    FamilySpec& slot = registry()[spec.name];
    auto early_variants = std::move(slot.variants);  // mutants registered before the family
    std::string name = spec.name;
    slot = std::move(spec);
    for (auto& v : early_variants) slot.variants.push_back(std::move(v));
    slot.name = name;
    return true;
}

inline bool register_variant(const std::string& family, VariantSpec v) {
    registry()[family].variants.push_back(std::move(v));
    return true;
}

}  // namespace bitgate

#define BITGATE_CAT2(a, b) a##b
#define BITGATE_CAT(a, b) BITGATE_CAT2(a, b)
// BITGATE_FAMILY(make_spec()) at namespace scope registers a family at start-up.
#define BITGATE_FAMILY(...) \
    static const bool BITGATE_CAT(bitgate_family_, __LINE__) = ::bitgate::register_family(__VA_ARGS__)
// BITGATE_VARIANT(family, variant) adds a variant from another file (the mutants).
#define BITGATE_VARIANT(family, ...) \
    static const bool BITGATE_CAT(bitgate_variant_, __LINE__) = ::bitgate::register_variant(family, __VA_ARGS__)
// .launch = BITGATE_ON_DEVICE(fn): the launcher where the kernels are built, none elsewhere, so a
// host-only build links without them. The launcher is a field of its variant: no variant name to
// misspell.
#if defined(BITGATE_HAVE_CUDA)
#define BITGATE_ON_DEVICE(...) (__VA_ARGS__)
#else
#define BITGATE_ON_DEVICE(...) nullptr
#endif
