#include "gguf.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_set>

#include "errors.hpp"
#include "outfile.hpp"

namespace bitgate::gguf {

const char* vtype_name(VType t) {
    switch (t) {
        case VType::u8: return "uint8";
        case VType::i8: return "int8";
        case VType::u16: return "uint16";
        case VType::i16: return "int16";
        case VType::u32: return "uint32";
        case VType::i32: return "int32";
        case VType::f32: return "float32";
        case VType::boolean: return "bool";
        case VType::str: return "string";
        case VType::arr: return "array";
        case VType::u64: return "uint64";
        case VType::i64: return "int64";
        case VType::f64: return "float64";
    }
    return "?";
}

namespace {

bool known_vtype(uint32_t t) { return t <= 12; }

// Bytes of a scalar of type t (0 for string and array).
uint64_t scalar_size(VType t) {
    switch (t) {
        case VType::u8: case VType::i8: case VType::boolean: return 1;
        case VType::u16: case VType::i16: return 2;
        case VType::u32: case VType::i32: case VType::f32: return 4;
        case VType::u64: case VType::i64: case VType::f64: return 8;
        default: return 0;
    }
}

// The fewest bytes one value of type t can take in a file: bounds a count before allocating.
uint64_t min_size(VType t) {
    if (t == VType::str) return 8;
    if (t == VType::arr) return 12;
    return scalar_size(t);
}

}  // namespace

Value Value::f32(float v) { uint32_t u; std::memcpy(&u, &v, 4); return scalar(VType::f32, u); }
Value Value::f64(double v) { uint64_t u; std::memcpy(&u, &v, 8); return scalar(VType::f64, u); }

bool Value::is_int() const {
    switch (type) {
        case VType::u8: case VType::i8: case VType::u16: case VType::i16: case VType::u32:
        case VType::i32: case VType::u64: case VType::i64: return true;
        default: return false;
    }
}

bool Value::int_in(int64_t lo, int64_t hi, int64_t& out) const {
    int64_t v = 0;
    switch (type) {
        case VType::u8: v = static_cast<uint8_t>(raw); break;
        case VType::i8: v = static_cast<int8_t>(static_cast<uint8_t>(raw)); break;
        case VType::u16: v = static_cast<uint16_t>(raw); break;
        case VType::i16: v = static_cast<int16_t>(static_cast<uint16_t>(raw)); break;
        case VType::u32: v = static_cast<uint32_t>(raw); break;
        case VType::i32: v = static_cast<int32_t>(static_cast<uint32_t>(raw)); break;
        case VType::i64: v = static_cast<int64_t>(raw); break;
        case VType::u64:
            if (raw > static_cast<uint64_t>(INT64_MAX)) return false;
            v = static_cast<int64_t>(raw);
            break;
        default: return false;
    }
    if (v < lo || v > hi) return false;
    out = v;
    return true;
}

double Value::as_double() const {
    if (type == VType::f32) {
        float f; const uint32_t u = static_cast<uint32_t>(raw); std::memcpy(&f, &u, 4); return f;
    }
    double d; std::memcpy(&d, &raw, 8); return d;
}

std::string Value::show(size_t max_items) const {
    char buf[64];
    switch (type) {
        case VType::str: {
            std::string s = "\"";
            for (char c : this->s.substr(0, 80)) s += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
            if (this->s.size() > 80) s += "...";
            return s + "\"";
        }
        case VType::boolean: return raw ? "true" : "false";
        case VType::f32: case VType::f64: std::snprintf(buf, sizeof buf, "%.9g", as_double()); return buf;
        case VType::u64: std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(raw)); return buf;
        case VType::arr: {
            std::string s = std::string("[") + vtype_name(elem) + " x " + std::to_string(items.size()) + "]";
            if (max_items == 0) return s;
            s += " {";
            for (size_t i = 0; i < items.size() && i < max_items; ++i) s += (i ? ", " : "") + items[i].show(0);
            if (items.size() > max_items) s += ", ...";
            return s + "}";
        }
        default: {
            int64_t v = 0;
            int_in(INT64_MIN, INT64_MAX, v);
            return std::to_string(v);
        }
    }
}

TypeTraits type_traits(uint32_t t) {
    switch (t) {
        case t_f32: return {"F32", 1, 4};
        case t_f16: return {"F16", 1, 2};
        case t_q4_0: return {"Q4_0", 32, 18};
        case t_q4_1: return {"Q4_1", 32, 20};
        case t_q5_0: return {"Q5_0", 32, 22};
        case t_q5_1: return {"Q5_1", 32, 24};
        case t_q8_0: return {"Q8_0", 32, 34};
        case t_q8_1: return {"Q8_1", 32, 36};
        case t_q2_k: return {"Q2_K", 256, 84};
        case t_q3_k: return {"Q3_K", 256, 110};
        case t_q4_k: return {"Q4_K", 256, 144};
        case t_q5_k: return {"Q5_K", 256, 176};
        case t_q6_k: return {"Q6_K", 256, 210};
        case t_q8_k: return {"Q8_K", 256, 292};
        case t_i8: return {"I8", 1, 1};
        case t_i16: return {"I16", 1, 2};
        case t_i32: return {"I32", 1, 4};
        case t_i64: return {"I64", 1, 8};
        case t_f64: return {"F64", 1, 8};
        case t_bf16: return {"BF16", 1, 2};
        default: return {nullptr, 0, 0};
    }
}

std::string type_name(uint32_t t) {
    const TypeTraits tr = type_traits(t);
    return tr.name ? tr.name : "type " + std::to_string(t);
}

uint64_t tensor_bytes(uint32_t type, std::span<const int64_t> ne, std::string_view where) {
    const std::string w(where);
    const TypeTraits tr = type_traits(type);
    if (!tr.name) throw BadInput(w + ": unknown ggml type " + std::to_string(type));
    if (ne.empty()) throw BadInput(w + ": no dimensions");
    for (int64_t n : ne)
        if (n < 0) throw BadInput(w + ": negative dimension " + std::to_string(n));
    if (ne[0] % tr.block != 0)
        throw BadInput(w + ": row length " + std::to_string(ne[0]) + " is not a whole number of " + tr.name +
                       " blocks of " + std::to_string(tr.block));
    // rows * (ne[0] / block) * bytes, every product checked.
    uint64_t n = static_cast<uint64_t>(ne[0]) / tr.block;
    for (size_t i = 1; i < ne.size(); ++i)
        if (__builtin_mul_overflow(n, static_cast<uint64_t>(ne[i]), &n))
            throw BadInput(w + ": tensor size overflows");
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(tr.bytes), &n)) throw BadInput(w + ": tensor size overflows");
    return n;
}

const Value* File::find(std::string_view key) const {
    for (const KV& e : kv)
        if (e.key == key) return &e.value;
    return nullptr;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
    for (const TensorInfo& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

// ---- reading ------------------------------------------------------------------------------------

namespace {

constexpr int max_depth = 8;  // arrays nested deeper than this are refused (the stack is finite)

struct Cursor {
    std::span<const uint8_t> b;
    uint64_t pos = 0;
    const std::string& path;

    uint64_t left() const { return b.size() - pos; }
    [[noreturn]] void fail(const std::string& what) const {
        throw BadInput(path + ": " + what + " (at byte " + std::to_string(pos) + ")");
    }
    void need(uint64_t n, const char* what) const {
        if (n > left()) fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
                             std::to_string(left()) + " left");
    }
    uint64_t uint(unsigned n, const char* what) {
        need(n, what);
        uint64_t v = 0;
        for (unsigned i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[pos + i]) << (8 * i);
        pos += n;
        return v;
    }
    uint32_t u32(const char* what) { return static_cast<uint32_t>(uint(4, what)); }
    uint64_t u64(const char* what) { return uint(8, what); }
    std::string str(const char* what) {
        const uint64_t n = u64(what);
        need(n, what);
        std::string s(reinterpret_cast<const char*>(b.data() + pos), n);
        pos += n;
        return s;
    }
    // A count of items of at least `each` bytes each: never more than the bytes left can hold.
    uint64_t count(const char* what, uint64_t each) {
        const uint64_t n = u64(what);
        if (each > 0 && n > left() / each)
            fail(std::string(what) + " " + std::to_string(n) + " is more than the " + std::to_string(left()) +
                 " bytes left can hold");
        return n;
    }
};

Value read_value(Cursor& c, uint32_t type, int depth, const std::string& key) {
    if (!known_vtype(type)) c.fail("key '" + key + "': unknown value type " + std::to_string(type));
    const VType t = static_cast<VType>(type);
    if (t == VType::str) return Value::str_(c.str("string value"));
    if (t == VType::arr) {
        if (depth >= max_depth) c.fail("key '" + key + "': arrays nested deeper than " + std::to_string(max_depth));
        const uint32_t et = c.u32("array element type");
        if (!known_vtype(et)) c.fail("key '" + key + "': unknown array element type " + std::to_string(et));
        const uint64_t n = c.count("array length", min_size(static_cast<VType>(et)));
        Value v = Value::array(static_cast<VType>(et), {});
        v.items.reserve(n);
        for (uint64_t i = 0; i < n; ++i) v.items.push_back(read_value(c, et, depth + 1, key));
        return v;
    }
    const uint64_t raw = c.uint(static_cast<unsigned>(scalar_size(t)), "scalar value");
    if (t == VType::boolean && raw > 1) c.fail("key '" + key + "': bool value " + std::to_string(raw));
    return Value::scalar(t, raw);
}

}  // namespace

File parse(std::span<const uint8_t> image, const std::string& path) {
    Cursor c{image, 0, path};
    File f;
    f.file_size = image.size();
    if (image.size() < 4) throw BadInput(path + ": too short for a GGUF file (" + std::to_string(image.size()) + " bytes)");
    if (c.u32("magic") != magic) throw BadInput(path + ": not a GGUF file (bad magic)");
    f.version = c.u32("version");
    if (f.version != version)
        throw BadInput(path + ": unsupported GGUF version " + std::to_string(f.version) + " (supported: 3)");
    // Each tensor info takes at least 8 (name) + 4 (n_dims) + 8 (one dim) + 4 (type) + 8 (offset).
    const uint64_t n_tensors = c.u64("tensor count");
    const uint64_t n_kv = c.count("metadata count", 8 + 4 + 1);
    if (n_tensors > c.left() / 32)
        c.fail("tensor count " + std::to_string(n_tensors) + " is more than the " + std::to_string(c.left()) +
               " bytes left can hold");

    std::unordered_set<std::string> keys;
    f.kv.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = c.str("metadata key");
        if (!keys.insert(key).second) c.fail("duplicate metadata key '" + key + "'");
        const uint32_t type = c.u32("metadata value type");
        Value v = read_value(c, type, 0, key);
        f.kv.push_back({std::move(key), std::move(v)});
    }
    if (const Value* a = f.find("general.alignment")) {
        if (a->type != VType::u32) c.fail("general.alignment is " + std::string(vtype_name(a->type)) + ", not uint32");
        const uint64_t al = a->raw;
        if (al == 0 || (al & (al - 1)) != 0 || al > (1u << 20))
            c.fail("general.alignment " + std::to_string(al) + " is not a power of two up to 1 MiB");
        f.alignment = static_cast<uint32_t>(al);
    }

    std::unordered_set<std::string> names;
    f.tensors.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
        TensorInfo t;
        t.name = c.str("tensor name");
        if (!names.insert(t.name).second) c.fail("duplicate tensor '" + t.name + "'");
        const uint32_t nd = c.u32("tensor n_dims");
        if (nd == 0 || nd > max_dims)
            c.fail("tensor '" + t.name + "': n_dims " + std::to_string(nd) + " (must be 1.." + std::to_string(max_dims) + ")");
        for (uint32_t d = 0; d < nd; ++d) {
            const uint64_t n = c.u64("tensor dimension");
            if (n > static_cast<uint64_t>(INT64_MAX)) c.fail("tensor '" + t.name + "': dimension " + std::to_string(n) + " too large");
            t.ne.push_back(static_cast<int64_t>(n));
        }
        t.type = c.u32("tensor type");
        t.offset = c.u64("tensor offset");
        t.size = tensor_bytes(t.type, t.ne, path + ": tensor '" + t.name + "'");
        if (t.offset % f.alignment != 0)
            c.fail("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                   std::to_string(f.alignment));
        f.tensors.push_back(std::move(t));
    }

    // The data section starts at the next multiple of the alignment.
    const uint64_t al = f.alignment;
    const uint64_t data = c.pos + (al - c.pos % al) % al;
    f.data_offset = data;
    if (f.tensors.empty()) return f;
    if (data > image.size())
        throw BadInput(path + ": truncated: the data section would start at byte " + std::to_string(data) +
                       ", past the end of the file (" + std::to_string(image.size()) + " bytes)");
    const uint64_t data_size = image.size() - data;
    for (TensorInfo& t : f.tensors) {
        if (t.offset > data_size || t.size > data_size - t.offset)
            throw BadInput(path + ": tensor '" + t.name + "' (bytes " + std::to_string(t.offset) + ".." +
                           std::to_string(t.offset) + "+" + std::to_string(t.size) + " of the data section) lies outside the file (data section holds " +
                           std::to_string(data_size) + " bytes)");
        t.bytes = image.subspan(data + t.offset, t.size);
    }
    // No two tensors may share a byte.
    std::vector<const TensorInfo*> order;
    for (const TensorInfo& t : f.tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < order.size(); ++i) {
        const TensorInfo& a = *order[i - 1];
        const TensorInfo& b = *order[i];
        if (a.offset + a.size > b.offset)
            throw BadInput(path + ": tensors '" + a.name + "' and '" + b.name + "' overlap (offsets " +
                           std::to_string(a.offset) + " and " + std::to_string(b.offset) + ", the first has " +
                           std::to_string(a.size) + " bytes)");
    }
    return f;
}

Mapping::Mapping(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw BadInput(path + ": cannot open: " + std::strerror(errno));
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw BadInput(path + ": not a regular file");
    }
    size = static_cast<size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        throw BadInput(path + ": empty file");
    }
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw BadInput(path + ": cannot map: " + std::strerror(errno));
    data = static_cast<const uint8_t*>(p);
}

Mapping::~Mapping() {
    if (data) ::munmap(const_cast<uint8_t*>(data), size);
}

// ---- writing ------------------------------------------------------------------------------------

namespace {

struct Out {
    OutFile& f;
    uint64_t pos = 0;
    void bytes(const void* p, size_t n) {
        f.write(p, n);
        pos += n;
    }
    void uint(uint64_t v, unsigned n) {
        uint8_t b[8];
        for (unsigned i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
        bytes(b, n);
    }
    void str(const std::string& s) { uint(s.size(), 8); bytes(s.data(), s.size()); }
    void pad(uint64_t al) {
        static const uint8_t zeros[256] = {};
        uint64_t n = (al - pos % al) % al;
        while (n) { const uint64_t k = std::min<uint64_t>(n, sizeof zeros); bytes(zeros, k); n -= k; }
    }
    void value(const Value& v) {
        if (v.type == VType::str) return str(v.s);
        if (v.type == VType::arr) {
            uint(static_cast<uint32_t>(v.elem), 4);
            uint(v.items.size(), 8);
            for (const Value& x : v.items) {
                if (x.type != v.elem) throw std::logic_error("gguf: array item type differs from the element type");
                value(x);
            }
            return;
        }
        uint(v.raw, static_cast<unsigned>(scalar_size(v.type)));
    }
};

}  // namespace

void write(const std::string& path, const std::vector<KV>& kv, const std::vector<TensorOut>& tensors,
           const std::function<void(size_t, std::span<uint8_t>)>& fill, uint32_t alignment,
           const std::vector<std::string>& inputs) {
    std::vector<KV> meta = kv;
    bool has_al = false;
    for (const KV& e : meta) has_al |= e.key == "general.alignment";
    if (alignment != default_alignment && !has_al) meta.push_back({"general.alignment", Value::u32(alignment)});

    std::vector<uint64_t> sizes, offsets;
    uint64_t off = 0;
    for (const TensorOut& t : tensors) {
        const uint64_t n = tensor_bytes(t.type, t.ne, path + ": tensor '" + t.name + "'");
        sizes.push_back(n);
        offsets.push_back(off);
        off += n + (alignment - n % alignment) % alignment;
    }

    // Whole or not at all: a failed or interrupted write leaves no partial model where the file was.
    OutFile file(path, inputs);
    Out o{file};
    o.uint(magic, 4);
    o.uint(version, 4);
    o.uint(tensors.size(), 8);
    o.uint(meta.size(), 8);
    for (const KV& e : meta) {
        o.str(e.key);
        o.uint(static_cast<uint32_t>(e.value.type), 4);
        o.value(e.value);
    }
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorOut& t = tensors[i];
        o.str(t.name);
        o.uint(t.ne.size(), 4);
        for (int64_t n : t.ne) o.uint(static_cast<uint64_t>(n), 8);
        o.uint(t.type, 4);
        o.uint(offsets[i], 8);
    }
    o.pad(alignment);
    std::vector<uint8_t> data;
    for (size_t i = 0; i < tensors.size(); ++i) {
        data.assign(sizes[i], 0);
        fill(i, data);
        o.bytes(data.data(), data.size());
        o.pad(alignment);
    }
    std::vector<uint8_t>().swap(data);
    file.commit();
}

}  // namespace bitgate::gguf
