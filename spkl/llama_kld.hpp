// llama.cpp's KL-divergence base files: what `llama-perplexity --kl-divergence-base FILE`
// (with --save-all-logits / -f) writes and reads, so that a bitgate run and a llama.cpp run of the
// same tokens can be compared (docs/spkl.md, "llama.cpp KLD files").
//
// Layout, all little-endian: "_logits_" (8 bytes), int32 n_ctx, int32 n_vocab, int32 n_chunk,
// int32 tokens[n_chunk * n_ctx] (the whole evaluated token stream), then for every chunk the
// scored positions first .. n_ctx - 2 (first = n_ctx / 2), one record each: float scale, float
// min_log_prob, then n_vocab uint16 q (one more uint16 of padding when n_vocab is odd). The
// log-probability of token i is scale * q[i] + min_log_prob; q = 0 stands for "at most 16 below
// the maximum". Position p of chunk c predicts tokens[c * n_ctx + p + 1].
//
// Lossy: 16 bits per log-probability over a range of at most 16 (a step of 16/65535), and every
// token more than 16 below the row's maximum is clamped to that floor.
#pragma once
#include <cstdint>
#include <string>

namespace bitgate::spkl::llama {

inline constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
inline constexpr size_t kHeaderBytes = 20;
// Both conversions hold a row whole; larger rows (a vocabulary over 16M) are refused.
inline constexpr uint64_t kMaxRowBytes = uint64_t{64} << 20;

struct KldHeader {
    int32_t n_ctx = 0, n_vocab = 0, n_chunk = 0;
    int64_t first() const { return n_ctx / 2; }
    int64_t rows_per_chunk() const { return n_ctx - 1 - first(); }
    int64_t rows() const { return int64_t(n_chunk) * rows_per_chunk(); }
    int64_t record_u16() const { return 2 * ((int64_t(n_vocab) + 1) / 2) + 4; }  // per row
    uint64_t file_size() const;
};

// Whether the file starts with the llama.cpp magic (false for a file that cannot be read).
bool is_kld_file(const std::string& path);

// KLD file -> .spkl: f32 rows of the decoded log-probabilities, per row the input token and the
// target; with `all_tokens`, the whole token stream (n_chunk * n_ctx ids) also goes to that .npy.
// Every malformation is BadInput("IN: what is wrong"). Returns the header read.
KldHeader to_spkl(const std::string& in, const std::string& out, const std::string& model,
                  const std::string& all_tokens = {});

// .spkl -> KLD file. `all_tokens` (.npy, n_chunk * n_ctx ids) is the stream the rows were computed
// on; the rows must be its scored positions in order (and the file's own token and target ids,
// when present, must agree with it). Rows with NaN or infinite logits cannot be stored.
void from_spkl(const std::string& in, const std::string& out, int32_t n_ctx, const std::string& all_tokens);

}  // namespace bitgate::spkl::llama
