// The kernel spec: everything the engine needs to know about a family, as data.
//
// A family registers itself once (refimpl/<family>.cpp, with BITGATE_FAMILY) and its device
// launchers once (kernels/<family>.cu, with BITGATE_DEVICE). Catalogs, goldens, property search,
// device diffs, claims, bench and reports are generic over this description, so adding a family
// never edits the engine.
//
// Plain C++ only: both the host models and the CUDA translation units include it, and the
// registry lives here (inline, function-local statics) so neither side links against the engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
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

    int64_t operator[](std::string_view name) const {
        for (size_t i = 0; i < names.size(); ++i)
            if (names[i] == name) return values[i];
        return -1;  // a family asking for a dimension it did not declare is a programming error
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
// or one of `edges` (dispatch boundaries, ragged tails) a quarter of the time.
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
// (seed, profile, tensor name, shape, byte position): engine helpers in harness/inputs.hpp.
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
// Host models and device launchers see the tensors in the family's declared order, split by role.

struct HostIo {
    std::vector<std::span<const uint8_t>> in;
    std::vector<std::span<uint8_t>> out;
    std::vector<std::span<uint8_t>> work;

    template <class T> const T* input(size_t i) const { return reinterpret_cast<const T*>(in[i].data()); }
    template <class T> T* output(size_t i) const { return reinterpret_cast<T*>(out[i].data()); }
    template <class T> T* workspace(size_t i) const { return reinterpret_cast<T*>(work[i].data()); }
};

struct DeviceIo {
    std::vector<const void*> in;
    std::vector<void*> out;
    std::vector<void*> work;
    void* stream = nullptr;  // a cudaStream_t

    template <class T> const T* input(size_t i) const { return static_cast<const T*>(in[i]); }
    template <class T> T* output(size_t i) const { return static_cast<T*>(out[i]); }
    template <class T> T* workspace(size_t i) const { return static_cast<T*>(work[i]); }
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
};

// A kernel mutant: the kernel (or launcher) is what is wrong, so the bytes it must produce are
// those of the variant it imitates. Its model is left empty; the engine uses the imitated one's.
inline VariantSpec kernel_mutant(std::string imitates, std::string name, std::string expect, std::string what,
                                 std::function<std::string(const Shape&)> valid = {}) {
    return VariantSpec{.name = std::move(name), .summary = std::move(what), .valid = std::move(valid),
                       .mutant = true, .expect = std::move(expect), .golden_as = std::move(imitates)};
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
    // Device launchers by variant name, filled by kernels/<family>.cu where CUDA is built.
    std::map<std::string, DeviceLauncher> device;
    // Optional per-variant preparation (a hoisted quantization, say): the engine runs it before
    // every launch it checks, and the benchmark runs it once per buffer set, untimed, so that
    // time and launches per call are those of the call a caller repeats.
    std::map<std::string, DeviceLauncher> device_prepare;

    // False for an entry that only mutants or launchers have named so far.
    bool declared() const { return !dims.empty(); }
};

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
    auto early_device = std::move(slot.device);
    auto early_prepare = std::move(slot.device_prepare);
    std::string name = spec.name;
    slot = std::move(spec);
    for (auto& v : early_variants) slot.variants.push_back(std::move(v));
    for (auto& [k, fn] : early_device) slot.device[k] = std::move(fn);
    for (auto& [k, fn] : early_prepare) slot.device_prepare[k] = std::move(fn);
    slot.name = name;
    return true;
}

inline bool register_variant(const std::string& family, VariantSpec v) {
    registry()[family].variants.push_back(std::move(v));
    return true;
}

inline bool register_device(const std::string& family, const std::string& variant, DeviceLauncher fn) {
    registry()[family].device[variant] = std::move(fn);
    return true;
}

}  // namespace bitgate

namespace bitgate {
inline bool register_device_prepare(const std::string& family, const std::string& variant, DeviceLauncher fn) {
    registry()[family].device_prepare[variant] = std::move(fn);
    return true;
}
}  // namespace bitgate

#define BITGATE_CAT2(a, b) a##b
#define BITGATE_CAT(a, b) BITGATE_CAT2(a, b)
// BITGATE_FAMILY(make_spec()) at namespace scope registers a family at start-up.
#define BITGATE_FAMILY(...) \
    static const bool BITGATE_CAT(bitgate_family_, __LINE__) = ::bitgate::register_family(__VA_ARGS__)
#define BITGATE_VARIANT(family, ...) \
    static const bool BITGATE_CAT(bitgate_variant_, __LINE__) = ::bitgate::register_variant(family, __VA_ARGS__)
#define BITGATE_DEVICE_PREPARE(family, variant, fn)                                              \
    static const bool BITGATE_CAT(bitgate_prepare_, __LINE__) =                                    \
        ::bitgate::register_device_prepare(family, variant, fn)
#define BITGATE_DEVICE(family, variant, fn) \
    static const bool BITGATE_CAT(bitgate_device_, __LINE__) = ::bitgate::register_device(family, variant, fn)
