#include "llama_kld.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "errors.hpp"
#include "npy.hpp"
#include "outfile.hpp"
#include "spkl.hpp"
#include "spkl_math.hpp"

namespace bitgate::spkl::llama {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw BadInput(path + ": " + what); }

int32_t get_i32(const uint8_t* p) {
    return static_cast<int32_t>(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
}
void put_i32(uint8_t* p, int32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(uint32_t(v) >> (8 * i));
}
float get_f32(const uint8_t* p) {
    const uint32_t u = static_cast<uint32_t>(get_i32(p));
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

class In {
public:
    explicit In(const std::string& path) : path_(path) {
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            bad(path, "not a regular file");
        }
        size_ = uint64_t(st.st_size);
    }
    ~In() { ::close(fd_); }
    In(const In&) = delete;
    In& operator=(const In&) = delete;
    uint64_t size() const { return size_; }
    void read(void* dst, size_t n) {
        auto* p = static_cast<uint8_t*>(dst);
        while (n > 0) {
            const ssize_t got = ::read(fd_, p, std::min<size_t>(n, size_t{1} << 30));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) bad(path_, std::string("read error: ") + std::strerror(errno));
            if (got == 0) bad(path_, "truncated while reading (the file shrank)");
            p += got;
            n -= size_t(got);
        }
    }

private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

}  // namespace

uint64_t KldHeader::file_size() const {
    return kHeaderBytes + 4 * uint64_t(n_chunk) * uint64_t(n_ctx) + 2 * uint64_t(record_u16()) * uint64_t(rows());
}

bool is_kld_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char m[8];
    const bool yes = ::read(fd, m, 8) == 8 && std::memcmp(m, kMagic, 8) == 0;
    ::close(fd);
    return yes;
}

KldHeader to_spkl(const std::string& in, const std::string& out, const std::string& model, const std::string& all_tokens) {
    refuse_outputs({{"the output", out}, {"--tokens", all_tokens}}, {in});
    In f(in);
    if (f.size() < kHeaderBytes)
        bad(in, "truncated: " + std::to_string(f.size()) + " bytes, less than the 20-byte llama.cpp KLD header");
    uint8_t head[kHeaderBytes];
    f.read(head, sizeof head);
    if (std::memcmp(head, kMagic, 8) != 0) bad(in, "not a llama.cpp KLD file (the magic is not \"_logits_\")");
    KldHeader h;
    h.n_ctx = get_i32(head + 8);
    h.n_vocab = get_i32(head + 12);
    h.n_chunk = get_i32(head + 16);
    if (h.n_ctx < 2) bad(in, "n_ctx " + std::to_string(h.n_ctx) + " is less than 2");
    if (h.n_vocab < 1) bad(in, "n_vocab " + std::to_string(h.n_vocab) + " is less than 1");
    if (h.n_chunk < 0) bad(in, "n_chunk " + std::to_string(h.n_chunk) + " is negative");
    // A row is converted whole (n_vocab f32 values): the bound to-llama-kld has, checked before
    // anything is allocated, since a file of no scored rows (n_ctx 2) may still name any n_vocab.
    if (4 * uint64_t(h.n_vocab) > kMaxRowBytes)
        bad(in, "n_vocab " + std::to_string(h.n_vocab) + ": rows of more than 64 MiB are not converted");
    // All three are below 2^31: the size fits in 64 bits with room to spare.
    if (f.size() != h.file_size())
        bad(in, (f.size() < h.file_size() ? "truncated: " : "wrong size: ") + std::to_string(f.size()) +
                    " bytes, n_ctx " + std::to_string(h.n_ctx) + ", n_vocab " + std::to_string(h.n_vocab) + " and n_chunk " +
                    std::to_string(h.n_chunk) + " make " + std::to_string(h.file_size()));

    const uint64_t n_tok = uint64_t(h.n_chunk) * uint64_t(h.n_ctx);
    std::vector<uint32_t> tokens(n_tok);
    {
        std::vector<uint8_t> chunk(size_t{1} << 16);
        for (uint64_t i = 0; i < n_tok;) {
            const size_t n = size_t(std::min<uint64_t>(n_tok - i, chunk.size() / 4));
            f.read(chunk.data(), 4 * n);
            for (size_t k = 0; k < n; ++k, ++i) {
                const int32_t t = get_i32(chunk.data() + 4 * k);
                if (t < 0 || t >= h.n_vocab)
                    bad(in, "token " + std::to_string(t) + " at index " + std::to_string(i) + " is outside the vocabulary (" +
                                std::to_string(h.n_vocab) + ")");
                tokens[i] = uint32_t(t);
            }
        }
    }
    const uint64_t rows = uint64_t(h.rows());
    std::vector<uint32_t> row_tokens(rows), row_targets(rows);
    for (uint64_t c = 0, r = 0; c < uint64_t(h.n_chunk); ++c)
        for (int64_t p = h.first(); p < h.n_ctx - 1; ++p, ++r) {
            row_tokens[r] = tokens[c * uint64_t(h.n_ctx) + uint64_t(p)];
            row_targets[r] = tokens[c * uint64_t(h.n_ctx) + uint64_t(p) + 1];
        }
    Header sh;
    sh.dtype = Dtype::f32;
    sh.vocab = uint32_t(h.n_vocab);
    sh.rows = rows;
    sh.model = model.empty() ? "llama.cpp KLD base, n_ctx " + std::to_string(h.n_ctx) : model;
    if (!all_tokens.empty()) npy::write_ids(all_tokens, tokens, false, {in});
    tokens = {};
    Writer w(out, sh, row_tokens, row_targets, {in});
    row_tokens = {};
    row_targets = {};
    std::vector<uint8_t> rec(size_t(h.record_u16()) * 2);
    std::vector<float> logp(size_t(h.n_vocab));
    for (uint64_t r = 0; r < rows; ++r) {
        f.read(rec.data(), rec.size());
        const float scale = get_f32(rec.data());
        const float min_log_prob = get_f32(rec.data() + 4);
        for (size_t i = 0; i < logp.size(); ++i) {
            const uint16_t q = uint16_t(rec[8 + 2 * i] | rec[9 + 2 * i] << 8);
            // float multiply, then float add: two roundings, as the format's reader does them.
            const float s = scale * static_cast<float>(q);
            logp[i] = s + min_log_prob;
        }
        w.write_row(logp.data());
    }
    w.finish();
    return h;
}

void from_spkl(const std::string& in, const std::string& out, int32_t n_ctx, const std::string& all_tokens) {
    Reader r(in);
    const Header& sh = r.header();
    if (n_ctx < 2) throw BadInput("--n-ctx " + std::to_string(n_ctx) + ": must be at least 2");
    if (sh.vocab > uint32_t(std::numeric_limits<int32_t>::max()))
        bad(in, "vocabulary " + std::to_string(sh.vocab) + " does not fit llama.cpp's int32");
    if (sh.row_bytes() > kMaxRowBytes) bad(in, "rows of more than 64 MiB are not converted");
    const std::vector<uint32_t> tokens = npy::read_ids(all_tokens, [&] {
        npy::Reader t(all_tokens);
        return t.header().shape.size() == 1 ? uint64_t(t.header().shape[0]) : 0;
    }(), false);
    KldHeader h;
    h.n_ctx = n_ctx;
    h.n_vocab = int32_t(sh.vocab);
    if (tokens.size() % uint64_t(n_ctx) != 0 || tokens.size() / uint64_t(n_ctx) > uint64_t(std::numeric_limits<int32_t>::max()))
        bad(all_tokens, std::to_string(tokens.size()) + " tokens are not a whole number of chunks of n_ctx " + std::to_string(n_ctx));
    h.n_chunk = int32_t(tokens.size() / uint64_t(n_ctx));
    if (uint64_t(h.rows()) != sh.rows)
        bad(in, std::to_string(sh.rows) + " rows, but " + std::to_string(h.n_chunk) + " chunks of n_ctx " + std::to_string(n_ctx) +
                    " score " + std::to_string(h.rows()) + " positions");
    for (size_t i = 0; i < tokens.size(); ++i)
        if (tokens[i] >= sh.vocab)
            bad(all_tokens, "token " + std::to_string(tokens[i]) + " at index " + std::to_string(i) + " is outside the vocabulary (" +
                                std::to_string(sh.vocab) + ")");
    for (uint64_t c = 0, row = 0; c < uint64_t(h.n_chunk); ++c)
        for (int64_t p = h.first(); p < n_ctx - 1; ++p, ++row) {
            const uint64_t at = c * uint64_t(n_ctx) + uint64_t(p);
            if (sh.has_tokens() && r.token_ids()[row] != tokens[at])
                bad(in, "token id at row " + std::to_string(row) + " is " + std::to_string(r.token_ids()[row]) + ", " +
                            all_tokens + " has " + std::to_string(tokens[at]) + " there");
            if (sh.has_targets() && r.target_ids()[row] != tokens[at + 1])
                bad(in, "target id at row " + std::to_string(row) + " is " + std::to_string(r.target_ids()[row]) + ", " +
                            all_tokens + " has " + std::to_string(tokens[at + 1]) + " next");
        }

    OutFile o(out, {in, all_tokens});
    uint8_t head[kHeaderBytes];
    std::memcpy(head, kMagic, 8);
    put_i32(head + 8, h.n_ctx);
    put_i32(head + 12, h.n_vocab);
    put_i32(head + 16, h.n_chunk);
    o.write(head, sizeof head);
    {
        std::vector<uint8_t> chunk;
        chunk.reserve(size_t{1} << 16);
        for (size_t i = 0; i < tokens.size();) {
            chunk.clear();
            for (; i < tokens.size() && chunk.size() < (size_t{1} << 16); ++i) {
                uint8_t b[4];
                put_i32(b, int32_t(tokens[i]));
                chunk.insert(chunk.end(), b, b + 4);
            }
            o.write(chunk.data(), chunk.size());
        }
    }
    std::vector<uint8_t> raw(sh.row_bytes());
    std::vector<float> x(sh.vocab);
    std::vector<uint8_t> rec(size_t(h.record_u16()) * 2);
    for (uint64_t row = 0; row < sh.rows; ++row) {
        r.read_rows(raw.data(), 1);
        to_f32(sh.dtype, raw.data(), x.data(), x.size());
        const RowMax m = row_max(x.data(), x.size());
        if (!m.finite)
            bad(in, "row " + std::to_string(row) + " has a NaN or infinite logit (vocab id " + std::to_string(m.bad_id) +
                        "), which the llama.cpp format cannot hold");
        float lo = x[0];
        for (float v : x) lo = std::min(lo, v);
        const float max_logit = m.max;
        const float min_logit = std::max(lo, max_logit - 16.0f);
        // log of the softmax normaliser, in double with the deterministic exp and log.
        double sum = 0;
        for (float v : x) sum += det_exp(static_cast<double>(v) - static_cast<double>(max_logit));
        const float log_sum_exp = static_cast<float>(det_log(sum));
        const float min_log_prob = (min_logit - max_logit) - log_sum_exp;
        const float scale = (max_logit - min_logit) / 65535.0f;
        std::fill(rec.begin(), rec.end(), 0);
        std::memcpy(rec.data(), &scale, 4);
        std::memcpy(rec.data() + 4, &min_log_prob, 4);
        if (scale != 0.0f) {
            const float inv = 1.0f / scale;
            for (size_t i = 0; i < x.size(); ++i) {
                uint32_t q = 0;
                if (x[i] > min_logit) {
                    const float v = inv * (x[i] - min_logit);  // in [0, 65535] up to rounding
                    q = v >= 65535.0f ? 65535u : static_cast<uint32_t>(std::nearbyint(v));
                }
                rec[8 + 2 * i] = uint8_t(q);
                rec[9 + 2 * i] = uint8_t(q >> 8);
            }
        }
        o.write(rec.data(), rec.size());
    }
    r.finish();
    o.commit();
}

}  // namespace bitgate::spkl::llama
