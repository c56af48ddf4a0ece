#include "spkl_npy.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>

#include "errors.hpp"
#include "spkl.hpp"

namespace bitgate::spkl {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw BadInput(path + ": " + what); }

const char kNpyMagic[] = "\x93NUMPY";

size_t item_size(const std::string& descr) {
    if (descr == "<f4" || descr == "<i4" || descr == "<u4") return 4;
    if (descr == "<f2") return 2;
    if (descr == "<i8" || descr == "<u8") return 8;
    return 0;
}

// The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
std::string dict_value(const std::string& path, const std::string& h, const std::string& key) {
    const size_t k = h.find("'" + key + "'");
    if (k == std::string::npos) bad(path, "npy header has no '" + key + "'");
    size_t p = h.find(':', k);
    if (p == std::string::npos) bad(path, "npy header is malformed near '" + key + "'");
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    if (p >= h.size()) bad(path, "npy header is malformed near '" + key + "'");
    size_t e;
    if (h[p] == '\'') {
        e = h.find('\'', p + 1);
        if (e == std::string::npos) bad(path, "npy header is malformed near '" + key + "'");
        return h.substr(p + 1, e - p - 1);
    }
    if (h[p] == '(') {
        e = h.find(')', p);
        if (e == std::string::npos) bad(path, "npy header is malformed near '" + key + "'");
        return h.substr(p, e - p + 1);
    }
    e = h.find_first_of(",}", p);
    return h.substr(p, e == std::string::npos ? std::string::npos : e - p);
}

std::vector<uint64_t> parse_shape(const std::string& path, const std::string& t) {
    std::vector<uint64_t> shape;
    size_t p = 1;  // after '('
    while (p < t.size()) {
        while (p < t.size() && (t[p] == ' ' || t[p] == ',')) ++p;
        if (p >= t.size() || t[p] == ')') break;
        if (t[p] < '0' || t[p] > '9') bad(path, "npy shape " + t + " is not a tuple of integers");
        uint64_t v = 0;
        while (p < t.size() && t[p] >= '0' && t[p] <= '9') {
            if (v > (UINT64_MAX - 9) / 10) bad(path, "npy shape " + t + " overflows");
            v = v * 10 + uint64_t(t[p++] - '0');
        }
        shape.push_back(v);
    }
    return shape;
}

}  // namespace

uint64_t NpyArray::count() const {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
}

NpyReader::NpyReader(std::string path) : path_(std::move(path)) {
    f_ = std::fopen(path_.c_str(), "rb");
    if (!f_) bad(path_, std::string("cannot open: ") + std::strerror(errno));
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    uint8_t pre[10];
    if (std::fread(pre, 1, sizeof pre, f_) != sizeof pre || std::memcmp(pre, kNpyMagic, 6) != 0)
        bad(path_, "not a .npy file (wrong magic)");
    const int major = pre[6];
    uint64_t hlen;
    uint64_t off;
    if (major == 1) {
        hlen = uint64_t(pre[8]) | uint64_t(pre[9]) << 8;
        off = 10;
    } else if (major == 2 || major == 3) {
        uint8_t more[2];
        if (std::fread(more, 1, 2, f_) != 2) bad(path_, "truncated npy header");
        hlen = uint64_t(pre[8]) | uint64_t(pre[9]) << 8 | uint64_t(more[0]) << 16 | uint64_t(more[1]) << 24;
        off = 12;
    } else {
        bad(path_, "unsupported npy version " + std::to_string(major));
    }
    if (hlen > (1u << 20)) bad(path_, "npy header length " + std::to_string(hlen) + " is implausible");
    std::string h(hlen, '\0');
    if (std::fread(h.data(), 1, hlen, f_) != hlen) bad(path_, "truncated npy header");
    a_.data_offset = off + hlen;
    a_.descr = dict_value(path_, h, "descr");
    a_.item = item_size(a_.descr);
    if (a_.item == 0) bad(path_, "npy dtype '" + a_.descr + "' is not supported (<f4, <f2, <i4, <u4, <i8, <u8)");
    const std::string fo = dict_value(path_, h, "fortran_order");
    if (fo.find("True") != std::string::npos) bad(path_, "npy array is in Fortran order; write it in C order");
    a_.shape = parse_shape(path_, dict_value(path_, h, "shape"));
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) bad(path_, "cannot stat");
    bool overflow = false;
    uint64_t n = a_.item;
    for (uint64_t d : a_.shape) {
        if (d != 0 && n > UINT64_MAX / d) overflow = true;
        n *= d;
    }
    if (overflow) bad(path_, "npy shape overflows");
    const uint64_t want = a_.data_offset + n;
    if (uint64_t(st.st_size) < want)
        bad(path_, "truncated: " + std::to_string(st.st_size) + " bytes, the npy header promises " + std::to_string(want));
    if (uint64_t(st.st_size) > want)
        bad(path_, std::to_string(uint64_t(st.st_size) - want) + " bytes after the npy array");
}

NpyReader::~NpyReader() {
    if (f_) std::fclose(f_);
}

void NpyReader::read(void* dst, size_t bytes) {
    if (std::fread(dst, 1, bytes, f_) != bytes) bad(path_, "truncated while reading the array");
}

NpyWriter::NpyWriter(std::string path, const std::string& descr, const std::vector<uint64_t>& shape)
    : path_(std::move(path)) {
    std::string tuple = "(";  // Python's repr: (n,) for one dimension, (a, b) for two
    for (size_t i = 0; i < shape.size(); ++i) tuple += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) tuple += ",";
    tuple += ")";
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + tuple + ", }";
    // Version 1.0 header: magic, 1, 0, u16 length; the total is padded with spaces to 64, ending in '\n'.
    size_t total = 10 + dict.size() + 1;
    total = (total + 63) / 64 * 64;
    dict.append(total - 10 - dict.size() - 1, ' ');
    dict += '\n';
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) bad(path_, std::string("cannot create: ") + std::strerror(errno));
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    const uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(dict.size() & 0xff),
                             static_cast<uint8_t>(dict.size() >> 8)};
    if (std::fwrite(pre, 1, 10, f_) != 10 || std::fwrite(dict.data(), 1, dict.size(), f_) != dict.size())
        throw std::runtime_error(path_ + ": write failed");
    left_ = item_size(descr);
    for (uint64_t d : shape) left_ *= d;
}

NpyWriter::~NpyWriter() {
    if (f_) std::fclose(f_);
    if (!done_) std::remove(path_.c_str());
}

void NpyWriter::write(const void* p, size_t bytes) {
    if (bytes == 0) return;
    if (bytes > left_) throw std::logic_error(path_ + ": more npy data than the shape holds");
    if (std::fwrite(p, 1, bytes, f_) != bytes) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    left_ -= bytes;
}

void NpyWriter::finish() {
    if (left_ != 0) throw std::logic_error(path_ + ": npy array written short");
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0) throw std::runtime_error(path_ + ": write failed");
    done_ = true;
}

std::vector<uint32_t> read_npy_ids(const std::string& path, uint64_t rows, bool allow_none) {
    NpyReader r(path);
    const NpyArray& a = r.array();
    if (a.descr[1] == 'f') bad(path, "ids must be integers, the array is '" + a.descr + "'");
    if (a.shape.size() != 1 || a.shape[0] != rows)
        bad(path, "ids must be a 1-D array of " + std::to_string(rows) + " entries (one per row)");
    std::vector<uint8_t> raw(a.item * rows);
    r.read(raw.data(), raw.size());
    std::vector<uint32_t> ids(rows);
    const bool is_signed = a.descr[1] == 'i';
    for (uint64_t i = 0; i < rows; ++i) {
        uint64_t u = 0;
        std::memcpy(&u, raw.data() + i * a.item, a.item);  // little-endian host
        int64_t v = static_cast<int64_t>(u);
        if (a.item == 4 && is_signed) v = static_cast<int32_t>(static_cast<uint32_t>(u));
        if (allow_none && is_signed && v == -1) {
            ids[i] = kNoTarget;
            continue;
        }
        if ((is_signed && v < 0) || u >= kNoTarget)
            bad(path, "id at index " + std::to_string(i) + " is out of range (" + std::to_string(v) + ")");
        ids[i] = static_cast<uint32_t>(u);
    }
    return ids;
}

void write_npy_ids(const std::string& path, const std::vector<uint32_t>& ids, bool none_as_minus1) {
    NpyWriter w(path, "<i8", {ids.size()});
    std::vector<int64_t> v(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) v[i] = (none_as_minus1 && ids[i] == kNoTarget) ? -1 : int64_t(ids[i]);
    w.write(v.data(), v.size() * 8);
    w.finish();
}

}  // namespace bitgate::spkl
