#include "npy.hpp"

#include <array>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "errors.hpp"

namespace bitgate::npy {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;               // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy pads the header so the first axis can grow

struct DtypeInfo {
    std::string_view name;
    size_t size;
};
constexpr std::array<DtypeInfo, 7> kDtypes = {{
    {"<f4", 4}, {"<f2", 2}, {"|u1", 1}, {"|i1", 1}, {"<u2", 2}, {"<u4", 4}, {"<i4", 4},
}};

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw BadInput(path + ": " + what); }

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) bad(path, "cannot open");
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) bad(path, "read error");
    return data;
}

// Element count of a shape, or -1 when a dimension is negative or the product overflows.
int64_t count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (const int64_t d : shape) {
        if (d < 0) return -1;
        if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
        n *= d;
    }
    return n;
}

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }.
// A small recursive-descent reader of exactly that subset; anything else is a malformed header.
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

    void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
        bool have_descr = false, have_fortran = false, have_shape = false;
        expect('{');
        while (!peek('}')) {
            const std::string key = string_literal();
            expect(':');
            if (key == "descr") {
                once(have_descr, key);
                if (peek('[')) fail("structured dtype (a list of fields) is not supported");
                descr = string_literal();
            } else if (key == "fortran_order") {
                once(have_fortran, key);
                fortran = boolean();
            } else if (key == "shape") {
                once(have_shape, key);
                shape = tuple();
            } else {
                fail("unexpected key '" + key + "'");
            }
            if (!peek('}')) expect(',');
        }
        expect('}');
        skip_space();
        if (pos_ != s_.size()) fail("text after the closing brace");
        if (!have_descr) fail("no 'descr' key");
        if (!have_fortran) fail("no 'fortran_order' key");
        if (!have_shape) fail("no 'shape' key");
    }

private:
    [[noreturn]] void fail(const std::string& what) const { bad(path_, "bad .npy header: " + what); }

    void once(bool& seen, const std::string& key) const {
        if (seen) fail("key '" + key + "' given twice");
        seen = true;
    }
    void skip_space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    bool peek(char c) {
        skip_space();
        return pos_ < s_.size() && s_[pos_] == c;
    }
    void expect(char c) {
        if (!peek(c)) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
        ++pos_;
    }
    std::string string_literal() {
        skip_space();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
            fail("expected a quoted string at offset " + std::to_string(pos_));
        const char q = s_[pos_++];
        const size_t end = s_.find(q, pos_);
        if (end == std::string_view::npos) fail("unterminated string");
        std::string out(s_.substr(pos_, end - pos_));
        if (out.find('\\') != std::string::npos) fail("escapes in strings are not supported");
        pos_ = end + 1;
        return out;
    }
    bool boolean() {
        skip_space();
        for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
            if (s_.substr(pos_, word.size()) == word) {
                pos_ += word.size();
                return value;
            }
        fail("'fortran_order' must be True or False");
    }
    int64_t integer() {
        skip_space();
        const size_t start = pos_;
        int64_t v = 0;
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
            const int digit = s_[pos_++] - '0';
            if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dimension does not fit in 64 bits");
            v = v * 10 + digit;
        }
        if (pos_ == start) fail("expected a non-negative integer in 'shape' at offset " + std::to_string(start));
        return v;
    }
    // (), (5,), (3, 4) and (3, 4,): a one-element tuple needs its comma, as in Python.
    std::vector<int64_t> tuple() {
        std::vector<int64_t> dims;
        expect('(');
        bool comma = false;
        while (!peek(')')) {
            dims.push_back(integer());
            comma = peek(',');
            if (comma) ++pos_;
            else if (!peek(')')) fail("expected ',' or ')' in 'shape'");
        }
        expect(')');
        if (dims.size() == 1 && !comma) fail("'shape' (n) is not a tuple; numpy writes (n,)");
        return dims;
    }

    std::string_view s_;
    const std::string& path_;
    size_t pos_ = 0;
};

// numpy's own layout (numpy/lib/format.py, _write_array_header and _wrap_header): keys sorted,
// spare spaces so the first axis can grow in place, then padding to 64 bytes and a newline.
std::string header_text(const std::vector<int64_t>& shape, const std::string& dtype) {
    std::string h = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': " + shape_str(shape) + ", }";
    if (!shape.empty()) h.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
    return h;
}

// "<f4" -> "|f4": the same type spelled with another byte-order character.
std::string with_order(char order, std::string_view dtype) {
    std::string s(1, order);
    if (!dtype.empty()) s.append(dtype.substr(1));
    return s;
}

void put_le(std::string& out, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += char((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

size_t itemsize(std::string_view dtype) {
    for (const auto& d : kDtypes)
        if (d.name == dtype) return d.size;
    return 0;
}

std::string_view dtype_of(Elem e) {
    switch (e) {
        case Elem::u8: return "|u1";
        case Elem::i8: return "|i1";
        case Elem::u16: return "<u2";
        case Elem::f16: return "<f2";
        case Elem::u32: return "<u4";
        case Elem::i32: return "<i4";
        case Elem::f32: return "<f4";
        case Elem::q8_0: return "|u1";
    }
    return "|u1";
}

Tensor read(const std::string& path) {
    const std::vector<uint8_t> file = slurp(path);
    if (file.size() < kMagic.size() + 2 || std::string_view(reinterpret_cast<const char*>(file.data()), kMagic.size()) != kMagic)
        bad(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
    const int major = file[6], minor = file[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
        bad(path, ".npy version " + std::to_string(major) + "." + std::to_string(minor) +
                      " is not supported (1.0, 2.0 and 3.0 are)");
    const size_t len_bytes = major == 1 ? 2 : 4;
    const size_t start = 8 + len_bytes;
    if (file.size() < start) bad(path, "truncated in the header length");
    size_t header_len = 0;
    for (size_t i = 0; i < len_bytes; ++i) header_len |= size_t(file[8 + i]) << (8 * i);
    if (file.size() - start < header_len)
        bad(path, "truncated in the header (" + std::to_string(header_len) + " bytes announced, " +
                      std::to_string(file.size() - start) + " present)");
    const std::string_view header(reinterpret_cast<const char*>(file.data()) + start, header_len);
    // v1 and v2 headers are latin-1, v3 UTF-8; the keys and values we accept are ASCII in either.

    Tensor t;
    bool fortran = false;
    HeaderParser(header, path).parse(t.dtype, fortran, t.shape);

    if (t.dtype.size() == 3 && t.dtype[0] != '|' && itemsize(with_order('|', t.dtype)) == 1)
        t.dtype = with_order('|', t.dtype);  // one-byte types have no byte order: '<u1' is '|u1'
    if (!t.dtype.empty() && t.dtype[0] == '>' && itemsize(with_order('<', t.dtype)) != 0)
        bad(path, "big-endian dtype '" + t.dtype + "' is not supported (save with '" + with_order('<', t.dtype) + "')");
    const size_t item = itemsize(t.dtype);
    if (item == 0) bad(path, "unsupported dtype '" + t.dtype + "' (supported: <f4 <f2 |u1 |i1 <u2 <u4 <i4)");
    if (fortran) bad(path, "Fortran-order array is not supported (save a C-order array)");

    const int64_t n = count(t.shape);
    if (n < 0 || uint64_t(n) > std::numeric_limits<size_t>::max() / item) bad(path, "shape " + shape_str(t.shape) + " is too large");
    const size_t need = size_t(n) * item;
    const size_t have = file.size() - start - header_len;
    if (have < need)
        bad(path, "truncated: shape " + shape_str(t.shape) + " of " + t.dtype + " needs " + std::to_string(need) +
                      " data bytes, the file has " + std::to_string(have));
    if (have > need)
        bad(path, std::to_string(have - need) + " bytes after the data of shape " + shape_str(t.shape) + " of " + t.dtype);
    t.bytes.assign(file.begin() + std::ptrdiff_t(start + header_len), file.end());
    return t;
}

void write(const std::string& path, std::span<const uint8_t> bytes, std::vector<int64_t> shape, std::string dtype) {
    const size_t item = itemsize(dtype);
    if (item == 0) throw std::invalid_argument("npy::write: unsupported dtype '" + dtype + "'");
    const int64_t n = count(shape);
    if (n < 0 || uint64_t(n) * item != bytes.size())
        throw std::invalid_argument("npy::write: " + std::to_string(bytes.size()) + " bytes do not hold shape " +
                                    shape_str(shape) + " of " + dtype);

    const std::string dict = header_text(shape, dtype);
    const bool v1 = dict.size() + 1 + 10 + kAlign <= 0xffff;
    const size_t prefix = v1 ? 10 : 12;
    const size_t pad = kAlign - (prefix + dict.size() + 1) % kAlign;
    std::string head(kMagic);
    head += char(v1 ? 1 : 2);
    head += char(0);
    put_le(head, dict.size() + pad + 1, v1 ? 2 : 4);
    head += dict;
    head.append(pad, ' ');
    head += '\n';

    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) bad(path, "cannot open for writing");
    out.write(head.data(), std::streamsize(head.size()));
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    if (!out) bad(path, "write failed");
}

std::vector<uint8_t> read_raw(const std::string& path, size_t need) {
    std::vector<uint8_t> data = slurp(path);
    if (data.size() != need)
        bad(path, "raw tensor file has " + std::to_string(data.size()) + " bytes, the tensor needs " + std::to_string(need));
    return data;
}

Tensor read_for(const std::string& path, Elem elem, size_t need) {
    const std::string_view want = dtype_of(elem);
    const bool is_npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (!is_npy) return Tensor{read_raw(path, need), {int64_t(need / itemsize(want))}, std::string(want)};
    Tensor t = read(path);
    if (t.dtype != want) bad(path, "dtype " + t.dtype + ", the tensor needs " + std::string(want));
    if (t.bytes.size() != need)
        bad(path, "shape " + shape_str(t.shape) + " of " + t.dtype + " holds " + std::to_string(t.bytes.size()) +
                      " bytes, the tensor needs " + std::to_string(need));
    return t;
}

}  // namespace bitgate::npy
