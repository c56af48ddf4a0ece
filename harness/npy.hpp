// NumPy .npy files (v1.0, 2.0, 3.0; little-endian, C order): the one reader and writer, used by
// `bitgate run` for tensors and by `bitgate spkl` for logits and ids.
//
// Supported dtypes, spelled as numpy writes them: <f4 <f2 |u1 |i1 <u2 <u4 <i4 <u8 <i8. The header
// is parsed strictly (each key once, nothing else, no text after the dict, versions 1.0/2.0/3.0
// only); anything else, and every malformation, is a BadInput("FILE: what is wrong"), one line.
// The data size is checked against the file size before anything is allocated.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bitgate/spec.hpp"
#include "outfile.hpp"

namespace bitgate::npy {

struct Tensor {
    std::vector<uint8_t> bytes;  // the data, C order, little-endian
    std::vector<int64_t> shape;  // empty for a 0-d array (one element)
    std::string dtype;           // one of the supported dtypes, as above
};

struct Header {
    std::string dtype;
    std::vector<int64_t> shape;
    uint64_t data_offset = 0;  // where the data starts
    uint64_t data_bytes = 0;   // exactly what follows, to the end of the file
};

// A whole file held in memory (`name` names it in messages): its header, checked as a file's is.
Header parse(std::span<const uint8_t> file, const std::string& name);

// A file streamed in order: the header at construction, then read() the data.
class Reader {
public:
    explicit Reader(std::string path);
    ~Reader();
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    const std::string& path() const { return path_; }
    const Header& header() const { return h_; }
    void read(void* dst, size_t n);  // the next n bytes; BadInput if the file shrank
private:
    std::string path_;
    int fd_ = -1;
    Header h_;
};

Tensor read(const std::string& path);

// Writes a .npy v1.0 file (v2.0 when the header does not fit in 64 KiB), laid out as numpy's own
// writer lays it out, through OutFile (a failed write leaves the old target as it was; an output
// that is one of `inputs` is refused). finish() checks that exactly the shape's bytes came.
class Writer {
public:
    Writer(std::string path, std::vector<int64_t> shape, std::string dtype, const std::vector<std::string>& inputs = {});
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    void write(const void* p, size_t n);
    void finish();
private:
    std::unique_ptr<OutFile> out_;
    uint64_t left_ = 0;
};
// Throws std::invalid_argument when bytes do not match shape and dtype, BadInput when the file
// cannot be written.
void write(const std::string& path, std::span<const uint8_t> bytes, std::vector<int64_t> shape, std::string dtype);

// Ids (token or target ids, one per row): a 1-D integer array of exactly `rows` entries, any
// supported integer dtype; every id must lie in [0, 2^32 - 1). With allow_none, -1 is kNoId.
inline constexpr uint32_t kNoId = 0xffffffffu;
std::vector<uint32_t> read_ids(const std::string& path, uint64_t rows, bool allow_none);
// As <i8; with none_as_minus1, kNoId is written as -1. Never over one of `inputs`.
void write_ids(const std::string& path, const std::vector<uint32_t>& ids, bool none_as_minus1,
               const std::vector<std::string>& inputs = {});

// A raw tensor file: its bytes as they are; it must be a regular file of exactly `need` bytes.
std::vector<uint8_t> read_raw(const std::string& path, size_t need);

// Bytes per element of a supported dtype; 0 for any other string.
size_t itemsize(std::string_view dtype);
// The dtype a tensor element is stored as (Q8_0 blocks are stored as their bytes, |u1).
std::string_view dtype_of(Elem e);

// A tensor file for a spec tensor: .npy when the name ends in ".npy", else raw. The dtype must be
// dtype_of(elem) and the data exactly `need` bytes; the shape may be any that holds them.
Tensor read_for(const std::string& path, Elem elem, size_t need);

// "(3, 4)", numpy's spelling, for messages.
std::string shape_str(const std::vector<int64_t>& shape);

}  // namespace bitgate::npy
