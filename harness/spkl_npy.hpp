// Just enough .npy (NumPy format 1.0/2.0/3.0) for `spkl from-npy` / `to-npy`: little-endian,
// C-order arrays of f32/f16 (logits, rows x vocab) and of integer ids (1-D), read and written as
// a stream. Anything else is a BadInput naming the file and what it has.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace bitgate::spkl {

struct NpyArray {
    std::string descr;            // e.g. "<f4"
    size_t item = 0;              // bytes per element
    std::vector<uint64_t> shape;
    uint64_t data_offset = 0;
    uint64_t count() const;
};

class NpyReader {
public:
    explicit NpyReader(std::string path);
    ~NpyReader();
    NpyReader(const NpyReader&) = delete;
    NpyReader& operator=(const NpyReader&) = delete;
    const NpyArray& array() const { return a_; }
    const std::string& path() const { return path_; }
    void read(void* dst, size_t bytes);  // the next bytes of data, in order
private:
    std::string path_;
    std::FILE* f_ = nullptr;
    NpyArray a_;
};

class NpyWriter {
public:
    NpyWriter(std::string path, const std::string& descr, const std::vector<uint64_t>& shape);
    ~NpyWriter();
    NpyWriter(const NpyWriter&) = delete;
    NpyWriter& operator=(const NpyWriter&) = delete;
    void write(const void* p, size_t bytes);
    void finish();  // checks that exactly the shape's bytes were written
private:
    std::string path_;
    std::FILE* f_ = nullptr;
    uint64_t left_ = 0;
    bool done_ = false;
};

// A 1-D integer .npy (<i4, <u4, <i8, <u8) of exactly `rows` ids. With allow_none, -1 means "no
// target" (spkl's kNoTarget); every other value must lie in [0, 2^32 - 1).
std::vector<uint32_t> read_npy_ids(const std::string& path, uint64_t rows, bool allow_none);
void write_npy_ids(const std::string& path, const std::vector<uint32_t>& ids, bool none_as_minus1);

}  // namespace bitgate::spkl
