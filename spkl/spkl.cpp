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

void XxhFree::operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
Fd::~Fd() {
    if (fd >= 0) ::close(fd);
}

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

// A one-line identifier: valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF),
// no control characters, so that it prints on one line and goes into JSON as it is.
const char* model_problem(const std::string& m) {
    if (m.size() > kMaxModelBytes) return "model identifier is longer than 4096 bytes";
    const auto* p = reinterpret_cast<const unsigned char*>(m.data());
    const size_t n = m.size();
    for (size_t i = 0; i < n;) {
        const unsigned c = p[i];
        if (c < 0x20 || c == 0x7f) return "model identifier contains a control character";
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len;
        uint32_t cp, min;
        if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
        else return "model identifier is not valid UTF-8";
        if (i + len > n) return "model identifier is not valid UTF-8";
        for (size_t k = 1; k < len; ++k) {
            if ((p[i + k] & 0xc0) != 0x80) return "model identifier is not valid UTF-8";
            cp = cp << 6 | (p[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return "model identifier is not valid UTF-8";
        if (cp >= 0x80 && cp < 0xa0) return "model identifier contains a control character";
        i += len;
    }
    return nullptr;
}

std::array<uint8_t, kDigestBytes> canonical(XXH3_state_t* s) {
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
    std::array<uint8_t, kDigestBytes> out;
    std::memcpy(out.data(), c.digest, kDigestBytes);
    return out;
}

XxhPtr new_xxh() {
    XxhPtr s(XXH3_createState());
    if (!s || XXH3_128bits_reset(s.get()) != XXH_OK) throw std::runtime_error("xxh3: cannot create state");
    return s;
}

// The bytes of ids as the file stores them (u32 little-endian), `count` of them from `first`.
void put_ids(uint8_t* dst, const std::vector<uint32_t>& v, size_t first, size_t count) {
    for (size_t i = 0; i < count; ++i) put_u32(dst + 4 * i, v[first + i]);
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
    // Members own the descriptor and the hash state: a constructor that throws below frees both.
    fd_.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_.fd < 0) bad(path_, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0 || !S_ISREG(st.st_mode)) bad(path_, "not a regular file");
    xxh_ = new_xxh();
    ::posix_fadvise(fd_.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
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

    // The fixed header, the model id and its padding: small (at most 4096 + 47 bytes), kept.
    head_.assign(fixed, fixed + sizeof fixed);
    h_.model.resize(model_len);
    read_exact(h_.model.data(), model_len, "header");
    if (const char* p = model_problem(h_.model)) bad(path_, p);
    head_.insert(head_.end(), h_.model.begin(), h_.model.end());
    const uint64_t ids_at = ids_offset(h_);
    std::vector<uint8_t> pad(ids_at - head_.size());
    read_exact(pad.data(), pad.size(), "header");
    for (size_t i = 0; i < pad.size(); ++i)
        if (pad[i] != 0) bad(path_, "padding byte at offset " + std::to_string(head_.size() + i) + " is not zero");
    head_.insert(head_.end(), pad.begin(), pad.end());
    XXH3_128bits_update(xxh_.get(), head_.data(), head_.size());

    // The ids, in chunks straight into their vectors (the file's bytes are not kept as well).
    std::vector<uint8_t> chunk(size_t{1} << 16);
    auto read_ids = [&](std::vector<uint32_t>& v) {
        v.resize(h_.rows);
        for (uint64_t r = 0; r < h_.rows;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(h_.rows - r, chunk.size() / 4));
            read_exact(chunk.data(), 4 * n, "ids");
            XXH3_128bits_update(xxh_.get(), chunk.data(), 4 * n);
            for (size_t k = 0; k < n; ++k) v[r + k] = get_u32(chunk.data() + 4 * k);
            r += n;
        }
    };
    if (h_.has_tokens()) read_ids(tokens_);
    if (h_.has_targets()) {
        read_ids(targets_);
        for (uint64_t r = 0; r < h_.rows; ++r)
            if (targets_[r] != kNoTarget && targets_[r] >= h_.vocab)
                bad(path_, "target id " + std::to_string(targets_[r]) + " at row " + std::to_string(r) +
                               " is outside the vocabulary (" + std::to_string(h_.vocab) + ")");
    }
    const uint64_t ids_end = ids_at + ids_bytes;
    pad.assign(off - ids_end, 0);
    read_exact(pad.data(), pad.size(), "header");
    for (size_t i = 0; i < pad.size(); ++i)
        if (pad[i] != 0) bad(path_, "padding byte at offset " + std::to_string(ids_end + i) + " is not zero");
    XXH3_128bits_update(xxh_.get(), pad.data(), pad.size());
}

Reader::~Reader() = default;

void Reader::visit_prefix(const std::function<void(const void*, size_t)>& f) const {
    f(head_.data(), head_.size());
    std::vector<uint8_t> chunk(size_t{1} << 16);
    for (const std::vector<uint32_t>* v : {&tokens_, &targets_})
        for (size_t r = 0; r < v->size();) {
            const size_t n = std::min(v->size() - r, chunk.size() / 4);
            put_ids(chunk.data(), *v, r, n);
            f(chunk.data(), 4 * n);
            r += n;
        }
    const uint64_t ids_end = head_.size() + 4 * (tokens_.size() + targets_.size());
    const std::vector<uint8_t> zeros(h_.logits_offset() - ids_end, 0);
    f(zeros.data(), zeros.size());
}

bool Reader::same_prefix(const Reader& o) const {
    return head_ == o.head_ && tokens_ == o.tokens_ && targets_ == o.targets_;
}

void Reader::read_exact(void* dst, size_t n, const char* what) {
    auto* p = static_cast<uint8_t*>(dst);
    while (n > 0) {
        const ssize_t got = ::read(fd_.fd, p, std::min<size_t>(n, size_t{1} << 30));
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
    if (bytes_read_ % h_.row_bytes() != 0) throw std::logic_error("spkl::Reader::read_rows inside a row");
    const uint64_t left = h_.rows - rows_read_;
    const size_t n = static_cast<size_t>(left < max_rows ? left : max_rows);
    if (n == 0) return 0;
    read_exact(dst, n * h_.row_bytes(), "logits");
    XXH3_128bits_update(xxh_.get(), dst, n * h_.row_bytes());
    rows_read_ += n;
    bytes_read_ += uint64_t(n) * h_.row_bytes();
    return n;
}

size_t Reader::read_logits(void* dst, size_t max_bytes) {
    const uint64_t left = h_.rows * h_.row_bytes() - bytes_read_;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, max_bytes));
    if (n == 0) return 0;
    read_exact(dst, n, "logits");
    XXH3_128bits_update(xxh_.get(), dst, n);
    bytes_read_ += n;
    rows_read_ = bytes_read_ / h_.row_bytes();
    return n;
}

Reader::Trailer Reader::finish(bool check) {
    if (rows_read_ != h_.rows || bytes_read_ != h_.rows * h_.row_bytes())
        throw std::logic_error("spkl::Reader::finish before the last row");
    Trailer t;
    read_exact(t.stored.data(), kDigestBytes, "digest");
    t.computed = canonical(xxh_.get());
    if (check && !t.ok())
        bad(path_, "digest mismatch: stored xxh3 " + hex(t.stored.data(), kDigestBytes) + ", contents hash to " +
                       hex(t.computed.data(), kDigestBytes));
    return t;
}

// ---------------------------------------------------------------------------------------------
// Writer

Writer::Writer(std::string path, Header h, std::span<const uint32_t> tokens, std::span<const uint32_t> targets,
               const std::vector<std::string>& inputs, const std::string& targets_from)
    : h_(std::move(h)) {
    h_.version = kVersion;
    h_.flags = (tokens.empty() ? 0 : kFlagTokens) | (targets.empty() ? 0 : kFlagTargets);
    if (h_.vocab == 0) bad(path, "vocabulary size is 0");
    if (const char* p = model_problem(h_.model)) bad(path, p);
    if (!tokens.empty() && tokens.size() != h_.rows)
        bad(path, std::to_string(tokens.size()) + " token ids for " + std::to_string(h_.rows) + " rows");
    if (!targets.empty() && targets.size() != h_.rows)
        bad(path, std::to_string(targets.size()) + " target ids for " + std::to_string(h_.rows) + " rows");
    // A bad target is the fault of the file it came from, when there is one.
    const std::string& culprit = targets_from.empty() ? path : targets_from;
    for (size_t r = 0; r < targets.size(); ++r)
        if (targets[r] != kNoTarget && targets[r] >= h_.vocab)
            bad(culprit, "target id " + std::to_string(targets[r]) + " at row " + std::to_string(r) +
                             " is outside the vocabulary (" + std::to_string(h_.vocab) + ")");

    out_ = std::make_unique<OutFile>(std::move(path), inputs);
    xxh_ = new_xxh();
    std::vector<uint8_t> pre(ids_offset(h_), 0);
    std::memcpy(pre.data(), kMagic.data(), kMagic.size());
    put_u32(pre.data() + 8, h_.version);
    put_u32(pre.data() + 12, static_cast<uint32_t>(h_.dtype));
    put_u32(pre.data() + 16, h_.flags);
    put_u32(pre.data() + 20, h_.vocab);
    put_u64(pre.data() + 24, h_.rows);
    put_u32(pre.data() + 32, static_cast<uint32_t>(h_.model.size()));
    std::memcpy(pre.data() + kFixedHeaderBytes, h_.model.data(), h_.model.size());
    put(pre.data(), pre.size());
    std::vector<uint8_t> chunk(size_t{1} << 16);
    for (std::span<const uint32_t> v : {tokens, targets})
        for (size_t r = 0; r < v.size();) {
            const size_t n = std::min(v.size() - r, chunk.size() / 4);
            for (size_t k = 0; k < n; ++k) put_u32(chunk.data() + 4 * k, v[r + k]);
            put(chunk.data(), 4 * n);
            r += n;
        }
    const uint64_t ids_end = ids_offset(h_) + 4 * (tokens.size() + targets.size());
    const std::vector<uint8_t> zeros(h_.logits_offset() - ids_end, 0);
    put(zeros.data(), zeros.size());
}

Writer::~Writer() = default;

void Writer::put(const void* p, size_t n) {
    out_->write(p, n);
    XXH3_128bits_update(xxh_.get(), p, n);
}

void Writer::write_row(const float* logits) {
    // Sized at the first row, not in the constructor: a file of no rows may name any vocabulary.
    if (conv_.size() != h_.row_bytes()) conv_.resize(h_.row_bytes());
    from_f32(h_.dtype, logits, conv_.data(), h_.vocab);
    write_row_raw(conv_.data());
}

void Writer::write_row_raw(const void* row) {
    if (rows_written_ == h_.rows) bad(out_->path(), "more rows written than the header's " + std::to_string(h_.rows));
    put(row, h_.row_bytes());
    ++rows_written_;
}

void Writer::finish() {
    if (rows_written_ != h_.rows)
        bad(out_->path(), std::to_string(rows_written_) + " rows written, the header promises " + std::to_string(h_.rows));
    const auto d = canonical(xxh_.get());
    out_->write(d.data(), d.size());
    out_->commit();
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
        r.visit_prefix([&](const void* p, size_t n) { md5->update(p, n); });
    }
    // Chunks of at most 4 MiB, whatever the row size: a row of 16 GiB streams like many small ones.
    std::vector<uint8_t> buf(size_t{4} << 20);
    while (size_t n = r.read_logits(buf.data(), buf.size()))
        if (md5) md5->update(buf.data(), n);
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
