#include "spkl.hpp"

#include <algorithm>
#include <bitgate/f16.hpp>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <openssl/evp.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.hpp"

namespace bitgate::spkl {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
    throw BadInput(path + ": " + what);
}

uint32_t get_u32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t get_u64(const uint8_t* p) { return uint64_t(get_u32(p)) | uint64_t(get_u32(p + 4)) << 32; }
void put_u32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
    put_u32(p, static_cast<uint32_t>(v));
    put_u32(p + 4, static_cast<uint32_t>(v >> 32));
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Where the ids start: after the fixed header and the model id, padded to 8.
uint64_t ids_offset(const Header& h) { return align_up(kFixedHeaderBytes + h.model.size(), 8); }

// A one-line identifier: printable ASCII or UTF-8 bytes, no control characters.
const char* model_problem(const std::string& m) {
    if (m.size() > kMaxModelBytes) return "model identifier is longer than 4096 bytes";
    for (unsigned char c : m)
        if (c < 0x20 || c == 0x7f) return "model identifier contains a control character";
    return nullptr;
}

std::array<uint8_t, kDigestBytes> canonical(XXH3_state_t* s) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
    std::array<uint8_t, kDigestBytes> out;
    std::memcpy(out.data(), c.digest, kDigestBytes);
    return out;
}

XXH3_state_t* new_xxh() {
    XXH3_state_t* s = XXH3_createState();
    if (!s || XXH3_128bits_reset(s) != XXH_OK) throw std::runtime_error("xxh3: cannot create state");
    return s;
}

// Bad files must not make us allocate what the header claims before the size is proven.
uint64_t checked_mul(uint64_t a, uint64_t b, bool& overflow) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) overflow = true;
    return a * b;
}

uint16_t f32_to_bf16_rn(float f) {
    const uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace

size_t dtype_size(Dtype d) { return d == Dtype::f32 ? 4 : 2; }

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::f32: return "f32";
        case Dtype::f16: return "f16";
        case Dtype::bf16: return "bf16";
    }
    return "?";
}

Dtype parse_dtype(const std::string& s) {
    if (s == "f32") return Dtype::f32;
    if (s == "f16") return Dtype::f16;
    if (s == "bf16") return Dtype::bf16;
    throw BadInput("unknown dtype '" + s + "' (f32, f16 or bf16)");
}

uint64_t Header::logits_offset() const {
    const uint64_t ids = uint64_t(has_tokens()) + uint64_t(has_targets());
    return align_up(ids_offset(*this) + 4 * ids * rows, 64);
}

uint64_t Header::file_size() const { return logits_offset() + rows * row_bytes() + kDigestBytes; }

void to_f32(Dtype d, const void* src, float* dst, size_t n) {
    if (d == Dtype::f32) {
        std::memcpy(dst, src, n * 4);
        return;
    }
    const auto* h = static_cast<const uint16_t*>(src);
    if (d == Dtype::bf16) {
        for (size_t i = 0; i < n; ++i) dst[i] = f32_from_bits(uint32_t(h[i]) << 16);
        return;
    }
    // f16: a table of all 65536 values, built once from the exact conversion.
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t i = 0; i < 65536; ++i) t[i] = f16_to_f32(static_cast<uint16_t>(i));
        return t;
    }();
    for (size_t i = 0; i < n; ++i) dst[i] = table[h[i]];
}

void from_f32(Dtype d, const float* src, void* dst, size_t n) {
    if (d == Dtype::f32) {
        std::memcpy(dst, src, n * 4);
        return;
    }
    auto* h = static_cast<uint16_t*>(dst);
    if (d == Dtype::bf16)
        for (size_t i = 0; i < n; ++i) h[i] = f32_to_bf16_rn(src[i]);
    else
        for (size_t i = 0; i < n; ++i) h[i] = f32_to_f16_rn(src[i]);
}

std::string hex(const uint8_t* p, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string s(2 * n, '0');
    for (size_t i = 0; i < n; ++i) {
        s[2 * i] = digits[p[i] >> 4];
        s[2 * i + 1] = digits[p[i] & 15];
    }
    return s;
}

// ---------------------------------------------------------------------------------------------
// Reader

Reader::Reader(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) bad(path_, std::string("cannot open: ") + std::strerror(errno));
    xxh_ = new_xxh();
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        bad(path_, "not a regular file");
    }
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size < kFixedHeaderBytes + kDigestBytes)
        bad(path_, "truncated: " + std::to_string(size) + " bytes, less than an empty file's " +
                       std::to_string(kFixedHeaderBytes + kDigestBytes));

    uint8_t fixed[kFixedHeaderBytes];
    read_exact(fixed, sizeof fixed, "header");
    if (std::memcmp(fixed, kMagic.data(), kMagic.size()) != 0) bad(path_, "not a .spkl file (wrong magic)");
    h_.version = get_u32(fixed + 8);
    if (h_.version != kVersion)
        bad(path_, "unsupported version " + std::to_string(h_.version) + " (this bitgate reads version " +
                       std::to_string(kVersion) + ")");
    const uint32_t dtype = get_u32(fixed + 12);
    if (dtype > 2) bad(path_, "unknown dtype code " + std::to_string(dtype));
    h_.dtype = static_cast<Dtype>(dtype);
    h_.flags = get_u32(fixed + 16);
    if (h_.flags & ~(kFlagTokens | kFlagTargets)) bad(path_, "unknown flags 0x" + hex(fixed + 16, 4) + " (little-endian bytes)");
    h_.vocab = get_u32(fixed + 20);
    if (h_.vocab == 0) bad(path_, "vocabulary size is 0");
    h_.rows = get_u64(fixed + 24);
    const uint32_t model_len = get_u32(fixed + 32);
    if (model_len > kMaxModelBytes) bad(path_, "model identifier length " + std::to_string(model_len) + " exceeds 4096");
    if (get_u32(fixed + 36) != 0) bad(path_, "reserved header field (bytes 36..39) is not zero");

    // The size the header promises, computed without overflow, before anything is allocated.
    bool overflow = false;
    const uint64_t ids = uint64_t(h_.has_tokens()) + uint64_t(h_.has_targets());
    const uint64_t ids_bytes = checked_mul(4 * ids, h_.rows, overflow);
    const uint64_t logits = checked_mul(h_.rows, h_.row_bytes(), overflow);
    const uint64_t off = align_up(align_up(kFixedHeaderBytes + model_len, 8) + ids_bytes, 64);
    const uint64_t expect = off + logits + kDigestBytes;
    if (overflow || expect < logits) bad(path_, "rows x vocabulary overflows a 64-bit file size");
    if (size < expect)
        bad(path_, "truncated: " + std::to_string(size) + " bytes, the header promises " + std::to_string(expect) +
                       " (" + std::to_string(h_.rows) + " rows of " + std::to_string(h_.vocab) + " " +
                       dtype_name(h_.dtype) + ")");
    if (size > expect) bad(path_, std::to_string(size - expect) + " bytes of trailing data after the digest");

    prefix_.assign(fixed, fixed + sizeof fixed);
    prefix_.resize(off);
    read_exact(prefix_.data() + kFixedHeaderBytes, off - kFixedHeaderBytes, "header");
    h_.model.assign(reinterpret_cast<const char*>(prefix_.data()) + kFixedHeaderBytes, model_len);
    if (const char* p = model_problem(h_.model)) bad(path_, p);
    uint64_t pos = kFixedHeaderBytes + model_len;
    auto zeros_until = [&](uint64_t end) {
        for (; pos < end; ++pos)
            if (prefix_[pos] != 0) bad(path_, "padding byte at offset " + std::to_string(pos) + " is not zero");
    };
    zeros_until(ids_offset(h_));
    auto read_ids = [&](std::vector<uint32_t>& v) {
        v.resize(h_.rows);
        for (uint64_t r = 0; r < h_.rows; ++r, pos += 4) v[r] = get_u32(prefix_.data() + pos);
    };
    if (h_.has_tokens()) read_ids(tokens_);
    if (h_.has_targets()) {
        read_ids(targets_);
        for (uint64_t r = 0; r < h_.rows; ++r)
            if (targets_[r] != kNoTarget && targets_[r] >= h_.vocab)
                bad(path_, "target id " + std::to_string(targets_[r]) + " at row " + std::to_string(r) +
                               " is outside the vocabulary (" + std::to_string(h_.vocab) + ")");
    }
    zeros_until(off);
    XXH3_128bits_update(xxh_, prefix_.data(), prefix_.size());
}

Reader::~Reader() {
    if (fd_ >= 0) ::close(fd_);
    if (xxh_) XXH3_freeState(xxh_);
}

void Reader::read_exact(void* dst, size_t n, const char* what) {
    auto* p = static_cast<uint8_t*>(dst);
    while (n > 0) {
        const ssize_t got = ::read(fd_, p, n);
        if (got < 0) {
            if (errno == EINTR) continue;
            bad(path_, std::string("read error in ") + what + ": " + std::strerror(errno));
        }
        if (got == 0) bad(path_, std::string("truncated while reading the ") + what + " (the file shrank)");
        p += got;
        n -= static_cast<size_t>(got);
    }
}

size_t Reader::read_rows(void* dst, size_t max_rows) {
    const uint64_t left = h_.rows - rows_read_;
    const size_t n = static_cast<size_t>(left < max_rows ? left : max_rows);
    if (n == 0) return 0;
    read_exact(dst, n * h_.row_bytes(), "logits");
    XXH3_128bits_update(xxh_, dst, n * h_.row_bytes());
    rows_read_ += n;
    return n;
}

Reader::Trailer Reader::finish(bool check) {
    if (rows_read_ != h_.rows) throw std::logic_error("spkl::Reader::finish before the last row");
    Trailer t;
    read_exact(t.stored.data(), kDigestBytes, "digest");
    t.computed = canonical(xxh_);
    if (check && !t.ok())
        bad(path_, "digest mismatch: stored xxh3 " + hex(t.stored.data(), kDigestBytes) + ", contents hash to " +
                       hex(t.computed.data(), kDigestBytes));
    return t;
}

// ---------------------------------------------------------------------------------------------
// Writer

Writer::Writer(std::string path, Header h, std::span<const uint32_t> tokens, std::span<const uint32_t> targets)
    : path_(std::move(path)), h_(std::move(h)) {
    h_.version = kVersion;
    h_.flags = (tokens.empty() ? 0 : kFlagTokens) | (targets.empty() ? 0 : kFlagTargets);
    if (h_.vocab == 0) bad(path_, "vocabulary size is 0");
    if (const char* p = model_problem(h_.model)) bad(path_, p);
    if (!tokens.empty() && tokens.size() != h_.rows)
        bad(path_, std::to_string(tokens.size()) + " token ids for " + std::to_string(h_.rows) + " rows");
    if (!targets.empty() && targets.size() != h_.rows)
        bad(path_, std::to_string(targets.size()) + " target ids for " + std::to_string(h_.rows) + " rows");
    for (size_t r = 0; r < targets.size(); ++r)
        if (targets[r] != kNoTarget && targets[r] >= h_.vocab)
            bad(path_, "target id " + std::to_string(targets[r]) + " at row " + std::to_string(r) +
                           " is outside the vocabulary (" + std::to_string(h_.vocab) + ")");

    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) bad(path_, std::string("cannot create: ") + std::strerror(errno));
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    xxh_ = new_xxh();

    std::vector<uint8_t> pre(h_.logits_offset(), 0);
    std::memcpy(pre.data(), kMagic.data(), kMagic.size());
    put_u32(pre.data() + 8, h_.version);
    put_u32(pre.data() + 12, static_cast<uint32_t>(h_.dtype));
    put_u32(pre.data() + 16, h_.flags);
    put_u32(pre.data() + 20, h_.vocab);
    put_u64(pre.data() + 24, h_.rows);
    put_u32(pre.data() + 32, static_cast<uint32_t>(h_.model.size()));
    std::memcpy(pre.data() + kFixedHeaderBytes, h_.model.data(), h_.model.size());
    uint64_t pos = ids_offset(h_);
    for (uint32_t v : tokens) put_u32(pre.data() + pos, v), pos += 4;
    for (uint32_t v : targets) put_u32(pre.data() + pos, v), pos += 4;
    put(pre.data(), pre.size());
    conv_.resize(h_.row_bytes());
}

Writer::~Writer() {
    if (f_) std::fclose(f_);
    if (!done_) std::remove(path_.c_str());
    if (xxh_) XXH3_freeState(xxh_);
}

void Writer::put(const void* p, size_t n) {
    if (std::fwrite(p, 1, n, f_) != n) throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    XXH3_128bits_update(xxh_, p, n);
}

void Writer::write_row(const float* logits) {
    from_f32(h_.dtype, logits, conv_.data(), h_.vocab);
    write_row_raw(conv_.data());
}

void Writer::write_row_raw(const void* row) {
    if (rows_written_ == h_.rows) bad(path_, "more rows written than the header's " + std::to_string(h_.rows));
    put(row, h_.row_bytes());
    ++rows_written_;
}

void Writer::finish() {
    if (rows_written_ != h_.rows)
        bad(path_, std::to_string(rows_written_) + " rows written, the header promises " + std::to_string(h_.rows));
    const auto d = canonical(xxh_);
    if (std::fwrite(d.data(), 1, d.size(), f_) != d.size() || std::fclose(f_) != 0) {
        f_ = nullptr;
        throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
    }
    f_ = nullptr;
    done_ = true;
}

// ---------------------------------------------------------------------------------------------

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
    if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_md5(), nullptr) != 1)
        throw std::runtime_error("md5: OpenSSL EVP initialisation failed");
}
Md5::~Md5() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Md5::update(const void* p, size_t n) { EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), p, n); }
std::string Md5::hex() {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), d, &n);
    return spkl::hex(d, n);
}

FileCheck check_file(const std::string& path, bool want_md5) {
    Reader r(path);
    FileCheck c;
    c.header = r.header();
    c.file_size = r.header().file_size();
    std::unique_ptr<Md5> md5;
    if (want_md5) {
        md5 = std::make_unique<Md5>();
        md5->update(r.prefix().data(), r.prefix().size());
    }
    const size_t rb = r.header().row_bytes();
    const size_t batch = std::max<size_t>(1, (size_t{4} << 20) / rb);
    std::vector<uint8_t> buf(batch * rb);
    while (size_t n = r.read_rows(buf.data(), batch))
        if (md5) md5->update(buf.data(), n * rb);
    const auto t = r.finish(false);
    c.digest_stored = hex(t.stored.data(), t.stored.size());
    c.digest_computed = hex(t.computed.data(), t.computed.size());
    c.digest_ok = t.ok();
    if (md5) {
        md5->update(t.stored.data(), t.stored.size());
        c.md5 = md5->hex();
    }
    return c;
}

}  // namespace bitgate::spkl
