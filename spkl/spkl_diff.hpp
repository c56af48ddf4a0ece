// `spkl diff A B`: are two logits files the same bytes, and if not, how far apart are their
// distributions (KL(A||B) per row, top-1 agreement, perplexity and target probability).
//
// Both files stream through in batches of a few rows; per row only a handful of numbers are kept
// (RowResult, 56 bytes), so memory is a few rows of logits plus 56 bytes a row.
// Determinism: each row's numbers are a pure function of that row's bytes (spkl_math.hpp) and
// every summary is reduced serially in row order, so thread count and scheduling never show.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spkl.hpp"

namespace bitgate::spkl {

inline constexpr unsigned kMaxThreads = 256;                  // --threads above this is taken as this
inline constexpr size_t kMaxDiffRowBytes = size_t{64} << 20;  // a row diff holds whole (x4 buffers)
inline constexpr uint64_t kMaxDiffRows = uint64_t{1} << 28;    // x 56 bytes of per-row state: 15 GB

struct DiffOptions {
    unsigned threads = 0;              // 0: std::thread::hardware_concurrency()
    bool md5 = true;                   // false for `spkl kld` (skips the two md5 streams)
    size_t batch_bytes = size_t{4} << 20;  // logits bytes per file per batch (at least one row)
    // Called between batches, on one thread at a time, with the rows done so far and the total
    // (progress display only: nothing it does reaches the results).
    std::function<void(uint64_t done, uint64_t total)> progress;
};

inline constexpr uint32_t kSameRow = 0xffffffffu;

struct RowResult {
    double kld = 0;                    // NaN when either row has a NaN or infinite logit
    double logp_a = 0, logp_b = 0;     // log-probability of the target; NaN without one
    float max_a = 0, max_b = 0;        // the argmax logits
    uint32_t argmax_a = 0, argmax_b = 0;
    uint32_t first_diff = kSameRow;    // first vocab id whose bytes differ
    uint32_t bad_id = 0;               // first non-finite vocab id (A's when A has one)
    uint8_t nonfinite = 0;             // bit 0: A has a NaN/inf in this row, bit 1: B has
};

// Linear interpolation between the two nearest ranks (numpy's default, llama.cpp's method):
// h = (n-1) q, i = floor(h), value = x[i] + (h - i) (x[i+1] - x[i]), x sorted ascending.
struct Percentiles {
    double max = 0, p999 = 0, p99 = 0, p95 = 0, p90 = 0, p75 = 0, p50 = 0, p25 = 0, p10 = 0, p05 = 0, p01 = 0,
           p001 = 0, min = 0;
};

struct DiffResult {
    std::string path_a, path_b;
    Header ha, hb;
    uint64_t size_a = 0, size_b = 0;
    std::string md5_a, md5_b;  // empty with DiffOptions::md5 = false
    unsigned threads = 0;
    double seconds = 0;

    bool files_identical = false;   // every byte (decided by comparison, not by md5)
    bool logits_identical = false;  // every logits byte, same dtype
    uint64_t rows_differ = 0;       // rows whose logits bytes differ
    int64_t first_diff_row = -1;    // -1: none
    uint32_t first_diff_id = 0;
    float first_diff_a = 0, first_diff_b = 0;  // the values there, as f32

    uint64_t rows = 0, finite_rows = 0;
    int64_t first_nonfinite_row = -1;
    char first_nonfinite_file = 'A';
    uint32_t first_nonfinite_id = 0;
    float first_nonfinite_value = 0;

    uint64_t top1_same = 0;          // over finite rows
    double top1 = 0;                 // top1_same / finite_rows
    double top1_se = 0;              // sqrt(top1 (1 - top1) / (finite_rows - 1)), as llama-perplexity
    int64_t first_top1_diff_row = -1;

    double kld_mean = 0, kld_se = 0;  // mean and its standard error, finite rows
    Percentiles kld;

    uint64_t target_rows = 0;        // finite rows that have a target
    double nll_a = 0, nll_b = 0, nll_a_se = 0, nll_b_se = 0;  // mean -log p(target)
    double ppl_a = 0, ppl_b = 0;     // exp(mean nll)
    double ln_ppl_ratio = 0, ln_ppl_ratio_se = 0;  // mean (nll_b - nll_a)
    double dp_mean = 0, dp_se = 0, dp_rms = 0, dp_max = 0, dp_min = 0;  // p_B(target) - p_A(target)
    Percentiles dp;                  // of the same
    double ppl_ratio = 0, ppl_ratio_se = 0;  // PPL(B) / PPL(A) = exp(ln_ppl_ratio)
    double ppl_diff = 0, ppl_diff_se = 0;    // PPL(B) - PPL(A), the error with the covariance of the nlls
    double logp_corr = 0;            // Pearson correlation of log p_A(target) and log p_B(target)

    std::vector<RowResult> per_row;
};

// Either file may be a llama.cpp KLD file (detected by its magic; llama_kld.hpp): it is compared
// as the .spkl from-llama-kld would make of it.
DiffResult diff(const std::string& path_a, const std::string& path_b, const DiffOptions& opt);
// Both files .spkl.
DiffResult diff_spkl(const std::string& path_a, const std::string& path_b, const DiffOptions& opt);

// The summary as `spkl diff` prints it (md5sum-style lines first when computed).
void print_text(const DiffResult& r, std::FILE* out);
// Everything, per-row columns included.
nlohmann::json to_json(const DiffResult& r);

// Summaries, exposed for tests.
double neumaier_sum(const std::vector<double>& v);
double percentile(const std::vector<double>& sorted, unsigned num, unsigned den);

}  // namespace bitgate::spkl
