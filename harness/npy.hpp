// Tensor files for `bitgate run`: NumPy .npy (v1.0, 2.0, 3.0; little-endian, C order) and raw bytes.
//
// Supported dtypes, spelled as numpy writes them: <f4 <f2 |u1 |i1 <u2 <u4 <i4. Anything else, and
// every malformation, is a BadInput("FILE: what is wrong").
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bitgate/spec.hpp"

namespace bitgate::npy {

struct Tensor {
    std::vector<uint8_t> bytes;  // the data, C order, little-endian
    std::vector<int64_t> shape;  // empty for a 0-d array (one element)
    std::string dtype;           // one of the supported dtypes, as above
};

Tensor read(const std::string& path);
// Writes a .npy v1.0 file (v2.0 when the header does not fit in 64 KiB), laid out as numpy's
// own writer lays it out. Throws std::invalid_argument when bytes do not match shape and dtype,
// BadInput when the file cannot be written.
void write(const std::string& path, std::span<const uint8_t> bytes, std::vector<int64_t> shape, std::string dtype);

// A raw tensor file: its bytes as they are; its size must be exactly `need` bytes.
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
