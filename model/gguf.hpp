// The GGUF container (version 3), independent of any architecture: metadata values of every GGUF
// type, tensor infos, alignment and the data section. parse() reads a byte image it does not
// trust (every count and offset is checked against the bytes that are there); Writer streams a
// file tensor by tensor so a large model is never held twice.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bitgate::gguf {

inline constexpr uint32_t magic = 0x46554747u;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t version = 3;
inline constexpr uint32_t default_alignment = 32;
inline constexpr uint32_t max_dims = 4;  // GGML_MAX_DIMS

// Metadata value types, with the numbers the file carries.
enum class VType : uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    str = 8, arr = 9, u64 = 10, i64 = 11, f64 = 12,
};
const char* vtype_name(VType t);

// One metadata value. Scalars keep their raw little-endian bits in `raw` (zero-extended), so a
// value read and written again is the same bytes.
struct Value {
    VType type = VType::u32;
    uint64_t raw = 0;            // scalars
    std::string s;               // str
    VType elem = VType::u8;      // arr: element type
    std::vector<Value> items;    // arr: elements

    static Value u8(uint8_t v) { return scalar(VType::u8, v); }
    static Value i8(int8_t v) { return scalar(VType::i8, static_cast<uint8_t>(v)); }
    static Value u16(uint16_t v) { return scalar(VType::u16, v); }
    static Value i16(int16_t v) { return scalar(VType::i16, static_cast<uint16_t>(v)); }
    static Value u32(uint32_t v) { return scalar(VType::u32, v); }
    static Value i32(int32_t v) { return scalar(VType::i32, static_cast<uint32_t>(v)); }
    static Value u64(uint64_t v) { return scalar(VType::u64, v); }
    static Value i64(int64_t v) { return scalar(VType::i64, static_cast<uint64_t>(v)); }
    static Value f32(float v);
    static Value f64(double v);
    static Value boolean(bool v) { return scalar(VType::boolean, v ? 1 : 0); }
    static Value str_(std::string v) { Value x; x.type = VType::str; x.s = std::move(v); return x; }
    static Value array(VType elem, std::vector<Value> items) {
        Value x; x.type = VType::arr; x.elem = elem; x.items = std::move(items); return x;
    }
    static Value scalar(VType t, uint64_t raw) { Value x; x.type = t; x.raw = raw; return x; }

    bool is_int() const;
    bool is_float() const { return type == VType::f32 || type == VType::f64; }
    // Integer value as a signed 128-bit-safe pair: fits() says whether it is in [lo, hi].
    bool int_in(int64_t lo, int64_t hi, int64_t& out) const;
    double as_double() const;    // f32/f64
    std::string show(size_t max_items = 8) const;  // short human form for `model info`
};

struct KV {
    std::string key;
    Value value;
};

// ggml tensor types this reader knows the sizes of (so `model info` can describe other files);
// the weights loader accepts only F32, F16 and Q8_0.
enum GgmlType : uint32_t {
    t_f32 = 0, t_f16 = 1, t_q4_0 = 2, t_q4_1 = 3, t_q5_0 = 6, t_q5_1 = 7, t_q8_0 = 8, t_q8_1 = 9,
    t_q2_k = 10, t_q3_k = 11, t_q4_k = 12, t_q5_k = 13, t_q6_k = 14, t_q8_k = 15,
    t_i8 = 24, t_i16 = 25, t_i32 = 26, t_i64 = 27, t_f64 = 28, t_bf16 = 30,
};
struct TypeTraits {
    const char* name;  // nullptr: unknown
    uint32_t block;    // elements per block
    uint32_t bytes;    // bytes per block
};
TypeTraits type_traits(uint32_t ggml_type);
std::string type_name(uint32_t ggml_type);  // "Q8_0", or "type 99" when unknown

struct TensorInfo {
    std::string name;
    std::vector<int64_t> ne;  // ne[0] is the row length
    uint32_t type = 0;
    uint64_t offset = 0;      // from the start of the data section
    uint64_t size = 0;        // bytes, computed from type and ne
    std::span<const uint8_t> bytes;  // parse(): the tensor's bytes inside the image
};

struct File {
    uint32_t version = gguf::version;
    uint32_t alignment = default_alignment;
    std::vector<KV> kv;
    std::vector<TensorInfo> tensors;  // file order
    uint64_t data_offset = 0;         // where the data section starts in the file
    uint64_t file_size = 0;

    const Value* find(std::string_view key) const;
    const TensorInfo* find_tensor(std::string_view name) const;
};

// Bytes of a tensor of `type` with dimensions `ne`; throws BadInput(where + ": ...") on an
// unknown type, a negative dimension, a row length that is not whole blocks, or an overflow.
uint64_t tensor_bytes(uint32_t type, std::span<const int64_t> ne, std::string_view where);

// Parse a GGUF image. `path` names the file in every error: BadInput("PATH: what is wrong").
File parse(std::span<const uint8_t> image, const std::string& path);

// A read-only memory map of a whole file; BadInput when it cannot be opened or is empty.
struct Mapping {
    const uint8_t* data = nullptr;
    size_t size = 0;
    Mapping(const std::string& path);
    ~Mapping();
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    std::span<const uint8_t> bytes() const { return {data, size}; }
};

// Streaming writer: give the metadata and tensor infos (offsets are assigned here), then the
// bytes of each tensor in order. `fill(i, out)` writes tensor i's bytes into `out` (size
// tensors[i].size); the writer pads to the alignment. Written through OutFile: whole or not at
// all, and never over one of `inputs` (the files the caller reads, such as a mapped model).
struct TensorOut {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type = 0;
};
void write(const std::string& path, const std::vector<KV>& kv, const std::vector<TensorOut>& tensors,
           const std::function<void(size_t, std::span<uint8_t>)>& fill, uint32_t alignment = default_alignment,
           const std::vector<std::string>& inputs = {});

}  // namespace bitgate::gguf
