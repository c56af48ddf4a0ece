#include "npy.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.hpp"

namespace bitgate::npy {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;               // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy pads the header so the first axis can grow
constexpr size_t kMaxHeader = size_t{1} << 20;  // numpy writes a few hundred bytes; more is not a header

struct DtypeInfo {
    std::string_view name;
    size_t size;
};
constexpr std::array<DtypeInfo, 9> kDtypes = {{
    {"<f4", 4}, {"<f2", 2}, {"|u1", 1}, {"|i1", 1}, {"<u2", 2}, {"<u4", 4}, {"<i4", 4}, {"<u8", 8}, {"<i8", 8},
}};

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw BadInput(path + ": " + what); }

// Text from a file, made safe for a one-line message: control and non-ASCII bytes as \xNN.
std::string printable(std::string_view s) {
    std::string out;
    for (const unsigned char c : s.substr(0, 64)) {
        if (c >= 0x20 && c < 0x7f) {
            out += char(c);
        } else {
            static const char* d = "0123456789abcdef";
            out += "\\x";
            out += d[c >> 4];
            out += d[c & 15];
        }
    }
    if (s.size() > 64) out += "...";
    return out;
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
                fail("unexpected key '" + printable(key) + "'");
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


// The preamble: magic, version, header length. Returns the header length; `start` is where the
// dict begins. `b` holds the first min(12, file size) bytes.
size_t preamble(std::span<const uint8_t> b, uint64_t file_size, const std::string& path, size_t& start) {
    if (b.size() < kMagic.size() + 2 || std::string_view(reinterpret_cast<const char*>(b.data()), kMagic.size()) != kMagic)
        bad(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
    const int major = b[6], minor = b[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
        bad(path, ".npy version " + std::to_string(major) + "." + std::to_string(minor) +
                      " is not supported (1.0, 2.0 and 3.0 are)");
    const size_t len_bytes = major == 1 ? 2 : 4;
    start = 8 + len_bytes;
    if (file_size < start) bad(path, "truncated in the header length");
    size_t header_len = 0;
    for (size_t i = 0; i < len_bytes; ++i) header_len |= size_t(b[8 + i]) << (8 * i);
    if (file_size - start < header_len)
        bad(path, "truncated in the header (" + std::to_string(header_len) + " bytes announced, " +
                      std::to_string(file_size - start) + " present)");
    if (header_len > kMaxHeader)
        bad(path, "header of " + std::to_string(header_len) + " bytes is larger than the 1 MiB accepted");
    return header_len;
}

// The dict and the data size it promises against the bytes the file has after it.
Header parse_dict(std::string_view dict, uint64_t file_size, size_t data_offset, const std::string& path) {
    // v1 and v2 headers are latin-1, v3 UTF-8; the keys and values we accept are ASCII in either.
    Header h;
    bool fortran = false;
    HeaderParser(dict, path).parse(h.dtype, fortran, h.shape);
    if (h.dtype.size() == 3 && h.dtype[0] != '|' && itemsize(with_order('|', h.dtype)) == 1)
        h.dtype = with_order('|', h.dtype);  // one-byte types have no byte order: '<u1' is '|u1'
    if (!h.dtype.empty() && h.dtype[0] == '>' && itemsize(with_order('<', h.dtype)) != 0)
        bad(path, "big-endian dtype '" + h.dtype + "' is not supported (save with '" + with_order('<', h.dtype) + "')");
    const size_t item = itemsize(h.dtype);
    if (item == 0)
        bad(path, "unsupported dtype '" + printable(h.dtype) + "' (supported: <f4 <f2 |u1 |i1 <u2 <u4 <i4 <u8 <i8)");
    if (fortran) bad(path, "Fortran-order array is not supported (save a C-order array)");
    const int64_t n = count(h.shape);
    if (n < 0 || uint64_t(n) > std::numeric_limits<uint64_t>::max() / item || uint64_t(n) * item > (uint64_t{1} << 62))
        bad(path, "shape " + shape_str(h.shape) + " is too large");
    h.data_offset = data_offset;
    h.data_bytes = uint64_t(n) * item;
    const uint64_t have = file_size - data_offset;
    if (have < h.data_bytes)
        bad(path, "truncated: shape " + shape_str(h.shape) + " of " + h.dtype + " needs " + std::to_string(h.data_bytes) +
                      " data bytes, the file has " + std::to_string(have));
    if (have > h.data_bytes)
        bad(path, std::to_string(have - h.data_bytes) + " bytes after the data of shape " + shape_str(h.shape) + " of " + h.dtype);
    return h;
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

// ---- reading -------------------------------------------------------------------------------------

Header parse(std::span<const uint8_t> file, const std::string& name) {
    size_t start = 0;
    const size_t len = preamble(file.first(std::min<size_t>(file.size(), 12)), file.size(), name, start);
    const std::string_view dict(reinterpret_cast<const char*>(file.data()) + start, len);
    return parse_dict(dict, file.size(), start + len, name);
}

Reader::Reader(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) bad(path_, std::string("cannot open: ") + std::strerror(errno));
    try {
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) bad(path_, "not a regular file");
        const uint64_t size = uint64_t(st.st_size);
        std::array<uint8_t, 12> pre{};
        const size_t first = size_t(std::min<uint64_t>(size, pre.size()));
        read(pre.data(), first);
        size_t start = 0;
        const size_t len = preamble(std::span<const uint8_t>(pre.data(), first), size, path_, start);
        // A v1 header shorter than two bytes ends inside the 12 bytes read first: copy only its
        // own bytes and put the file position back at the end of the header.
        const size_t total = start + len;
        std::string dict(total, '\0');
        std::memcpy(dict.data(), pre.data(), std::min(first, total));
        if (total > first)
            read(dict.data() + first, total - first);
        else if (::lseek(fd_, off_t(total), SEEK_SET) != off_t(total))
            bad(path_, std::string("cannot seek past the header: ") + std::strerror(errno));
        h_ = parse_dict(std::string_view(dict).substr(start), size, start + len, path_);
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

Reader::~Reader() { ::close(fd_); }

void Reader::read(void* dst, size_t n) {
    auto* p = static_cast<uint8_t*>(dst);
    while (n > 0) {
        const ssize_t got = ::read(fd_, p, std::min<size_t>(n, size_t{1} << 30));
        if (got < 0) {
            if (errno == EINTR) continue;
            bad(path_, std::string("read error: ") + std::strerror(errno));
        }
        if (got == 0) bad(path_, "truncated while reading (the file shrank)");
        p += got;
        n -= size_t(got);
    }
}

Tensor read(const std::string& path) {
    Reader r(path);
    Tensor t;
    t.dtype = r.header().dtype;
    t.shape = r.header().shape;
    t.bytes.resize(size_t(r.header().data_bytes));  // no more than the file holds, checked
    r.read(t.bytes.data(), t.bytes.size());
    return t;
}

std::vector<uint8_t> read_raw(const std::string& path, size_t need) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (!regular || uint64_t(st.st_size) != need) {
        ::close(fd);
        if (!regular) bad(path, "not a regular file");
        bad(path, "raw tensor file has " + std::to_string(st.st_size) + " bytes, the tensor needs " + std::to_string(need));
    }
    std::vector<uint8_t> data(need);
    size_t done = 0;
    while (done < need) {
        const ssize_t got = ::read(fd, data.data() + done, need - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            ::close(fd);
            bad(path, "read error or the file shrank");
        }
        done += size_t(got);
    }
    ::close(fd);
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

std::vector<uint32_t> read_ids(const std::string& path, uint64_t rows, bool allow_none) {
    Reader r(path);
    const Header& h = r.header();
    const bool is_signed = h.dtype[1] == 'i';
    if (h.dtype[1] == 'f') bad(path, "ids must be integers, the array is '" + h.dtype + "'");
    if (h.shape.size() != 1 || uint64_t(h.shape[0]) != rows)
        bad(path, "ids must be a 1-D array of " + std::to_string(rows) + " entries (one per row), the array is " +
                      shape_str(h.shape));
    const size_t item = itemsize(h.dtype);
    std::vector<uint32_t> ids(rows);
    std::vector<uint8_t> chunk(size_t{1} << 16);
    for (uint64_t i = 0; i < rows;) {
        const size_t n = size_t(std::min<uint64_t>(rows - i, chunk.size() / item));
        r.read(chunk.data(), n * item);
        for (size_t k = 0; k < n; ++k, ++i) {
            uint64_t u = 0;
            std::memcpy(&u, chunk.data() + k * item, item);  // little-endian host
            int64_t v = int64_t(u);
            if (is_signed && item < 8) {
                const int shift = int(64 - 8 * item);
                v = int64_t(u << shift) >> shift;  // sign-extend
            }
            if (allow_none && is_signed && v == -1) {
                ids[i] = kNoId;
                continue;
            }
            if ((is_signed && v < 0) || u >= kNoId)
                bad(path, "id at index " + std::to_string(i) + " is out of range (" +
                              (is_signed ? std::to_string(v) : std::to_string(u)) + ")");
            ids[i] = uint32_t(u);
        }
    }
    return ids;
}

// ---- writing -------------------------------------------------------------------------------------

Writer::Writer(std::string path, std::vector<int64_t> shape, std::string dtype, const std::vector<std::string>& inputs) {
    const size_t item = itemsize(dtype);
    if (item == 0) throw std::invalid_argument("npy::Writer: unsupported dtype '" + dtype + "'");
    const int64_t n = count(shape);
    if (n < 0) throw std::invalid_argument("npy::Writer: bad shape " + shape_str(shape));
    left_ = uint64_t(n) * item;
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
    out_ = std::make_unique<OutFile>(std::move(path), inputs);
    out_->write(head.data(), head.size());
}

Writer::~Writer() = default;

void Writer::write(const void* p, size_t n) {
    if (n > left_) throw std::logic_error(out_->path() + ": more .npy data than the shape holds");
    out_->write(p, n);
    left_ -= n;
}

void Writer::finish() {
    if (left_ != 0) throw std::logic_error(out_->path() + ": .npy array written short");
    out_->commit();
}

void write(const std::string& path, std::span<const uint8_t> bytes, std::vector<int64_t> shape, std::string dtype) {
    const size_t item = itemsize(dtype);
    if (item == 0) throw std::invalid_argument("npy::write: unsupported dtype '" + dtype + "'");
    const int64_t n = count(shape);
    if (n < 0 || uint64_t(n) * item != bytes.size())
        throw std::invalid_argument("npy::write: " + std::to_string(bytes.size()) + " bytes do not hold shape " +
                                    shape_str(shape) + " of " + dtype);
    Writer w(path, std::move(shape), std::move(dtype));
    w.write(bytes.data(), bytes.size());
    w.finish();
}

void write_ids(const std::string& path, const std::vector<uint32_t>& ids, bool none_as_minus1,
               const std::vector<std::string>& inputs) {
    Writer w(path, {int64_t(ids.size())}, "<i8", inputs);
    std::vector<int64_t> chunk;
    chunk.reserve(8192);
    for (size_t i = 0; i < ids.size();) {
        chunk.clear();
        for (; i < ids.size() && chunk.size() < 8192; ++i)
            chunk.push_back(none_as_minus1 && ids[i] == kNoId ? -1 : int64_t(ids[i]));
        w.write(chunk.data(), chunk.size() * 8);
    }
    w.finish();
}

}  // namespace bitgate::npy
