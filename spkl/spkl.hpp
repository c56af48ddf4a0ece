// .spkl logits files: the format (docs/spkl.md, byte by byte), a streaming reader and writer.
//
// Both stream: memory is the header, the optional per-row ids (4 bytes a row each, held once) and
// whatever logits the caller buffers, never the whole file. Every malformed file is a
// bitgate::BadInput whose message is one line starting with the file's path.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <xxhash.h>

#include "outfile.hpp"

namespace bitgate::spkl {

inline constexpr std::array<uint8_t, 8> kMagic = {0x89, 'S', 'P', 'K', 'L', 0x0d, 0x0a, 0x1a};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kFixedHeaderBytes = 40;
inline constexpr size_t kDigestBytes = 16;        // XXH3-128, canonical (big-endian) form
inline constexpr size_t kMaxModelBytes = 4096;
inline constexpr uint32_t kFlagTokens = 1u << 0;   // per-row input token ids present
inline constexpr uint32_t kFlagTargets = 1u << 1;  // per-row target ids present
inline constexpr uint32_t kNoTarget = 0xffffffffu; // a row without a target

enum class Dtype : uint32_t { f32 = 0, f16 = 1, bf16 = 2 };
size_t dtype_size(Dtype d);
const char* dtype_name(Dtype d);
Dtype parse_dtype(const std::string& s);  // "f32" | "f16" | "bf16"; BadInput otherwise

struct Header {
    uint32_t version = kVersion;
    Dtype dtype = Dtype::f32;
    uint32_t flags = 0;
    uint32_t vocab = 0;
    uint64_t rows = 0;
    std::string model;  // identifier of what produced the logits (engine, model, quantization)

    bool has_tokens() const { return flags & kFlagTokens; }
    bool has_targets() const { return flags & kFlagTargets; }
    size_t row_bytes() const { return static_cast<size_t>(vocab) * dtype_size(dtype); }
    uint64_t logits_offset() const;  // where row 0 starts (a multiple of 64)
    uint64_t file_size() const;      // the exact size of a well-formed file
};

struct XxhFree {
    void operator()(XXH3_state_t* s) const;
};
using XxhPtr = std::unique_ptr<XXH3_state_t, XxhFree>;
struct Fd {  // a file descriptor closed by its destructor
    int fd = -1;
    Fd() = default;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();
};

// Rows in the file's dtype -> f32 (exact for all three dtypes).
void to_f32(Dtype d, const void* src, float* dst, size_t n);
// f32 -> the file's dtype, round to nearest even (f16 as __float2half_rn, bf16 likewise).
void from_f32(Dtype d, const float* src, void* dst, size_t n);

// Reads the header, the model id and the ids at open, then the rows in order. The integrity
// digest is checked as the rows pass: finish() reads the trailer and throws BadInput on mismatch.
class Reader {
public:
    explicit Reader(std::string path);
    ~Reader();
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    const std::string& path() const { return path_; }
    const Header& header() const { return h_; }
    const std::vector<uint32_t>& token_ids() const { return tokens_; }    // empty when absent
    const std::vector<uint32_t>& target_ids() const { return targets_; }  // empty when absent
    // Every byte before row 0 (header, model id, ids, padding), in order and in chunks, rebuilt
    // from what was read (the padding is proven zero): for a whole-file hash.
    void visit_prefix(const std::function<void(const void*, size_t)>& f) const;
    // The same bytes before row 0 as another file.
    bool same_prefix(const Reader& o) const;

    uint64_t rows_read() const { return rows_read_; }
    // Reads up to `max_rows` raw rows (row_bytes() each) into dst; returns how many.
    size_t read_rows(void* dst, size_t max_rows);
    // After the last row: reads the digest and compares it with the bytes read. With `check`, a
    // mismatch throws BadInput.
    struct Trailer {
        std::array<uint8_t, kDigestBytes> stored{}, computed{};
        bool ok() const { return stored == computed; }
    };
    Trailer finish(bool check = true);
    // Up to `max_bytes` of logits, whatever the row boundaries (rows of any size stream in
    // bounded chunks); returns how many bytes. read_rows() only at a row boundary.
    size_t read_logits(void* dst, size_t max_bytes);

private:
    void read_exact(void* dst, size_t n, const char* what);
    std::string path_;
    Fd fd_;
    XxhPtr xxh_;
    Header h_;
    std::vector<uint32_t> tokens_, targets_;
    std::vector<uint8_t> head_;  // the fixed header, the model id and its padding
    uint64_t rows_read_ = 0, bytes_read_ = 0;
};

// Writes a file row by row. The ids (when given) must have `rows` entries each; finish() checks
// that exactly `rows` rows were written and appends the digest. A writer destroyed before
// finish() leaves no file and the old target untouched (OutFile). An output that is one of
// `inputs` is refused. A target id outside the vocabulary is blamed on `targets_from` when given
// (the file the ids came from), else on the output.
class Writer {
public:
    Writer(std::string path, Header h, std::span<const uint32_t> tokens = {},
           std::span<const uint32_t> targets = {}, const std::vector<std::string>& inputs = {},
           const std::string& targets_from = {});
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    void write_row(const float* logits);   // converted to the header's dtype
    void write_row_raw(const void* row);   // already in the header's dtype (row_bytes())
    void finish();

private:
    void put(const void* p, size_t n);
    Header h_;
    std::unique_ptr<OutFile> out_;
    XxhPtr xxh_;
    uint64_t rows_written_ = 0;
    std::vector<uint8_t> conv_;
};

// Whole-file check for `spkl info`: header, digest, and optionally md5.
struct FileCheck {
    Header header;
    uint64_t file_size = 0;
    std::string digest_stored;    // canonical hex
    std::string digest_computed;  // canonical hex
    bool digest_ok = false;
    std::string md5;              // hex, when asked for
};
// Malformed headers and truncation throw BadInput; a digest mismatch is reported (digest_ok).
FileCheck check_file(const std::string& path, bool want_md5);

// MD5 through OpenSSL's EVP, printed as md5sum prints it.
class Md5 {
public:
    Md5();
    ~Md5();
    Md5(const Md5&) = delete;
    Md5& operator=(const Md5&) = delete;
    void update(const void* p, size_t n);
    std::string hex();  // finishes the digest
private:
    void* ctx_;
};

std::string hex(const uint8_t* p, size_t n);

}  // namespace bitgate::spkl
