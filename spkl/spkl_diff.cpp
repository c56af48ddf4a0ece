#include "spkl_diff.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <optional>
#include <system_error>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <bitgate/f16.hpp>

#include "errors.hpp"
#include "llama_kld.hpp"
#include "spkl_math.hpp"

namespace bitgate::spkl {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A batch of consecutive rows of both files. Stored as floats so f32 rows are read in place.
struct Slot {
    std::vector<float> a, b;
    size_t rows = 0;
    uint64_t first_row = 0;
};

void check_pair(const Reader& ra, const Reader& rb) {
    const Header& a = ra.header();
    const Header& b = rb.header();
    const std::string both = ra.path() + " vs " + rb.path() + ": ";
    if (a.vocab != b.vocab)
        throw BadInput(both + "vocabulary sizes differ (" + std::to_string(a.vocab) + " vs " + std::to_string(b.vocab) + ")");
    if (a.rows != b.rows)
        throw BadInput(both + "row counts differ (" + std::to_string(a.rows) + " vs " + std::to_string(b.rows) + ")");
    auto same_ids = [&](const std::vector<uint32_t>& x, const std::vector<uint32_t>& y, const char* what) {
        if (x.empty() || y.empty()) return;
        for (size_t r = 0; r < x.size(); ++r)
            if (x[r] != y[r])
                throw BadInput(both + what + " differ at row " + std::to_string(r) + " (" + std::to_string(x[r]) +
                               " vs " + std::to_string(y[r]) + "): not the same evaluation");
    };
    same_ids(ra.token_ids(), rb.token_ids(), "token ids");
    same_ids(ra.target_ids(), rb.target_ids(), "target ids");
}

struct Moments {
    double mean = kNaN, se = kNaN;
};
// Mean and the standard error of the mean (sample standard deviation / sqrt(n)), two passes.
Moments moments(const std::vector<double>& v) {
    Moments m;
    if (v.empty()) return m;
    const double n = static_cast<double>(v.size());
    m.mean = neumaier_sum(v) / n;
    if (v.size() < 2) return m;
    std::vector<double> sq(v.size());
    for (size_t i = 0; i < v.size(); ++i) sq[i] = (v[i] - m.mean) * (v[i] - m.mean);
    m.se = std::sqrt(neumaier_sum(sq) / (n - 1) / n);
    return m;
}

Percentiles percentiles(std::vector<double> v) {
    Percentiles p;
    if (v.empty()) {
        p = {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
        return p;
    }
    std::sort(v.begin(), v.end());
    p.max = v.back();
    p.p999 = percentile(v, 999, 1000);
    p.p99 = percentile(v, 99, 100);
    p.p95 = percentile(v, 95, 100);
    p.p90 = percentile(v, 90, 100);
    p.p75 = percentile(v, 75, 100);
    p.p50 = percentile(v, 50, 100);
    p.p25 = percentile(v, 25, 100);
    p.p10 = percentile(v, 10, 100);
    p.p05 = percentile(v, 5, 100);
    p.p01 = percentile(v, 1, 100);
    p.p001 = percentile(v, 1, 1000);
    p.min = v.front();
    return p;
}

// One row of both files: byte comparison, maxima, KL, target log-probabilities.
void process_row(const DiffResult& res, const void* pa, const void* pb, std::vector<float>& sa,
                 std::vector<float>& sb, uint64_t row, const std::vector<uint32_t>& targets, RowResult& out) {
    const Header& ha = res.ha;
    const Header& hb = res.hb;
    const size_t n = ha.vocab;
    if (ha.dtype == hb.dtype && std::memcmp(pa, pb, ha.row_bytes()) != 0) {
        const size_t w = dtype_size(ha.dtype);
        const auto* ca = static_cast<const uint8_t*>(pa);
        const auto* cb = static_cast<const uint8_t*>(pb);
        size_t i = 0;
        while (std::memcmp(ca + i * w, cb + i * w, w) == 0) ++i;
        out.first_diff = static_cast<uint32_t>(i);
    } else if (ha.dtype != hb.dtype) {
        out.first_diff = 0;
    }
    const float* fa = static_cast<const float*>(pa);
    const float* fb = static_cast<const float*>(pb);
    if (ha.dtype != Dtype::f32) to_f32(ha.dtype, pa, sa.data(), n), fa = sa.data();
    if (hb.dtype != Dtype::f32) to_f32(hb.dtype, pb, sb.data(), n), fb = sb.data();

    const RowMax ma = row_max(fa, n);
    const RowMax mb = row_max(fb, n);
    out.max_a = ma.max;
    out.max_b = mb.max;
    out.argmax_a = ma.argmax;
    out.argmax_b = mb.argmax;
    out.nonfinite = static_cast<uint8_t>((ma.finite ? 0 : 1) | (mb.finite ? 0 : 2));
    out.logp_a = out.logp_b = kNaN;
    if (out.nonfinite) {
        out.kld = kNaN;
        out.bad_id = ma.finite ? mb.bad_id : ma.bad_id;
        return;
    }
    const RowKld k = row_kld(fa, fb, n, ma.max, mb.max);
    out.kld = k.kld;
    if (!targets.empty() && targets[row] != kNoTarget) {
        const uint32_t t = targets[row];
        out.logp_a = (static_cast<double>(fa[t]) - k.a_shift) - k.log_sa;
        out.logp_b = (static_cast<double>(fb[t]) - k.b_shift) - k.log_sb;
    }
}

void summarise(DiffResult& r, const std::vector<uint32_t>& targets) {
    std::vector<double> kld, nll_a, nll_b, nll_d, dp, dp2;
    kld.reserve(r.per_row.size());
    for (uint64_t i = 0; i < r.per_row.size(); ++i) {
        const RowResult& x = r.per_row[i];
        if (x.first_diff != kSameRow) {
            ++r.rows_differ;
            if (r.first_diff_row < 0) r.first_diff_row = static_cast<int64_t>(i);
        }
        if (x.nonfinite) {
            if (r.first_nonfinite_row < 0) {
                r.first_nonfinite_row = static_cast<int64_t>(i);
                r.first_nonfinite_file = (x.nonfinite & 1) ? 'A' : 'B';
                r.first_nonfinite_id = x.bad_id;
            }
            continue;
        }
        ++r.finite_rows;
        if (x.argmax_a == x.argmax_b)
            ++r.top1_same;
        else if (r.first_top1_diff_row < 0)
            r.first_top1_diff_row = static_cast<int64_t>(i);
        kld.push_back(x.kld);
        if (!targets.empty() && targets[i] != kNoTarget) {
            nll_a.push_back(-x.logp_a);
            nll_b.push_back(-x.logp_b);
            nll_d.push_back(x.logp_a - x.logp_b);
            const double d = det_exp(x.logp_b) - det_exp(x.logp_a);
            dp.push_back(d);
            dp2.push_back(d * d);
        }
    }
    r.logits_identical = r.ha.dtype == r.hb.dtype && r.rows_differ == 0;
    r.top1 = r.finite_rows ? static_cast<double>(r.top1_same) / static_cast<double>(r.finite_rows) : kNaN;
    r.top1_se = r.finite_rows > 1 ? std::sqrt(r.top1 * (1 - r.top1) / static_cast<double>(r.finite_rows - 1)) : kNaN;
    const Moments mk = moments(kld);
    r.kld_mean = mk.mean;
    r.kld_se = mk.se;
    r.kld = percentiles(kld);

    r.target_rows = nll_a.size();
    const Moments ma = moments(nll_a), mb = moments(nll_b), md = moments(nll_d), mp = moments(dp);
    r.nll_a = ma.mean;
    r.nll_a_se = ma.se;
    r.nll_b = mb.mean;
    r.nll_b_se = mb.se;
    r.ppl_a = r.target_rows ? det_exp(ma.mean) : kNaN;
    r.ppl_b = r.target_rows ? det_exp(mb.mean) : kNaN;
    r.ln_ppl_ratio = md.mean;
    r.ln_ppl_ratio_se = md.se;
    r.dp_mean = mp.mean;
    r.dp_se = mp.se;
    r.dp_rms = dp2.empty() ? kNaN : std::sqrt(neumaier_sum(dp2) / static_cast<double>(dp2.size()));
    r.dp_max = dp.empty() ? kNaN : *std::max_element(dp.begin(), dp.end());
    r.dp_min = dp.empty() ? kNaN : *std::min_element(dp.begin(), dp.end());
    r.dp = percentiles(dp);
    r.ppl_ratio = r.target_rows ? det_exp(md.mean) : kNaN;
    r.ppl_ratio_se = r.ppl_ratio * r.ln_ppl_ratio_se;
    r.ppl_diff = r.ppl_b - r.ppl_a;
    r.ppl_diff_se = kNaN;
    r.logp_corr = kNaN;
    if (nll_a.size() >= 2) {
        // Covariance of the two nll means (the same rows on both sides), and the correlation.
        std::vector<double> cross(nll_a.size());
        for (size_t i = 0; i < nll_a.size(); ++i) cross[i] = (nll_a[i] - ma.mean) * (nll_b[i] - mb.mean);
        const double n = static_cast<double>(nll_a.size());
        const double cov_mean = neumaier_sum(cross) / (n - 1) / n;
        const double va = r.ppl_a * r.nll_a_se, vb = r.ppl_b * r.nll_b_se;
        const double var_diff = va * va + vb * vb - 2 * r.ppl_a * r.ppl_b * cov_mean;
        r.ppl_diff_se = std::sqrt(std::max(0.0, var_diff));
        // Pearson: cov / (sd_a sd_b); the se^2 n (n - 1) factors cancel. log p = -nll: same sign.
        if (r.nll_a_se > 0 && r.nll_b_se > 0) r.logp_corr = cov_mean / (r.nll_a_se * r.nll_b_se);
    }
}

// One logit, re-read after the stream has passed: the batches are gone and a few bytes are cheap.
float read_value(const std::string& path, const Header& h, uint64_t row, uint32_t id) {
    const size_t w = dtype_size(h.dtype);
    uint8_t b[4] = {0, 0, 0, 0};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        const auto off = static_cast<off_t>(h.logits_offset() + row * h.row_bytes() + uint64_t(id) * w);
        if (::pread(fd, b, w, off) != static_cast<ssize_t>(w)) std::memset(b, 0, sizeof b);
        ::close(fd);
    }
    float v;
    to_f32(h.dtype, b, &v, 1);
    return v;
}

}  // namespace

double neumaier_sum(const std::vector<double>& v) {
    double s = 0, c = 0;
    for (double x : v) {
        const double t = s + x;
        c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
        s = t;
    }
    return s + c;
}

double percentile(const std::vector<double>& sorted, unsigned num, unsigned den) {
    const uint64_t n = sorted.size();
    const uint64_t h_num = (n - 1) * num;  // h = (n-1) num / den, kept exact
    const uint64_t i = h_num / den;
    if (i + 1 >= n) return sorted[n - 1];
    const double frac = static_cast<double>(h_num % den) / den;
    return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

namespace {

// A llama.cpp KLD file on either side is first converted to a temporary .spkl (bounded memory,
// streamed), removed when the diff is done.
class Converted {
public:
    explicit Converted(const std::string& path) : path_(path) {
        if (!llama::is_kld_file(path)) return;
        const char* dir = std::getenv("TMPDIR");
        std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/bitgate-kld-XXXXXX";
        const int fd = ::mkstemp(tmpl.data());
        if (fd < 0) throw BadInput(path + ": cannot create a temporary file to convert it in");
        ::close(fd);
        tmp_ = tmpl;
        llama::to_spkl(path, tmp_, "");
    }
    ~Converted() {
        if (!tmp_.empty()) ::unlink(tmp_.c_str());
    }
    Converted(const Converted&) = delete;
    Converted& operator=(const Converted&) = delete;
    const std::string& readable() const { return tmp_.empty() ? path_ : tmp_; }

private:
    std::string path_, tmp_;
};

}  // namespace

DiffResult diff(const std::string& path_a, const std::string& path_b, const DiffOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Converted ca(path_a), cb(path_b);
    DiffResult res = diff_spkl(ca.readable(), cb.readable(), opt);
    res.path_a = path_a;
    res.path_b = path_b;
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

DiffResult diff_spkl(const std::string& path_a, const std::string& path_b, const DiffOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    Reader ra(path_a), rb(path_b);
    check_pair(ra, rb);
    DiffResult res;
    res.path_a = path_a;
    res.path_b = path_b;
    res.ha = ra.header();
    res.hb = rb.header();
    res.size_a = res.ha.file_size();
    res.size_b = res.hb.file_size();
    res.rows = res.ha.rows;
    // Percentiles need every row's numbers: bounded, and said so, rather than a bad_alloc.
    if (res.rows > kMaxDiffRows)
        throw BadInput(path_a + ": " + std::to_string(res.rows) + " rows; diff keeps " + std::to_string(sizeof(RowResult)) +
                       " bytes per row and takes at most " + std::to_string(kMaxDiffRows) + " rows");
    res.per_row.resize(res.rows);
    const std::vector<uint32_t>& targets = !ra.target_ids().empty() ? ra.target_ids() : rb.target_ids();

    Md5 md5a, md5b;
    if (opt.md5) {
        ra.visit_prefix([&](const void* p, size_t n) { md5a.update(p, n); });
        rb.visit_prefix([&](const void* p, size_t n) { md5b.update(p, n); });
    }
    const bool prefix_same = ra.same_prefix(rb);

    const size_t rba = res.ha.row_bytes(), rbb = res.hb.row_bytes();
    // A batch holds whole rows of both files, twice (double buffering): bound the row.
    for (const Reader* r : {&ra, &rb})
        if (r->header().row_bytes() > kMaxDiffRowBytes)
            throw BadInput(r->path() + ": rows of " + std::to_string(r->header().row_bytes()) + " bytes (vocabulary " +
                           std::to_string(r->header().vocab) + ") exceed the " + std::to_string(kMaxDiffRowBytes >> 20) +
                           " MiB a row may have for diff");
    const size_t batch = std::max<size_t>(1, opt.batch_bytes / std::max(rba, rbb));
    Slot slots[2];
    for (Slot& s : slots) {
        s.a.resize((batch * rba + 3) / 4);
        s.b.resize((batch * rbb + 3) / 4);
    }
    unsigned nt = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
    nt = std::min(nt, kMaxThreads);

    // Per batch, tasks in this order: 0 read the next batch of A, 1 of B, 2 md5 of this batch of A,
    // 3 of B, then one task per row. Threads take tasks in order; a barrier ends the batch.
    int cur = 0;
    slots[0].rows = ra.read_rows(slots[0].a.data(), batch);
    rb.read_rows(slots[0].b.data(), batch);
    std::atomic<size_t> next_task{0};
    size_t ntasks = 4 + slots[0].rows;
    bool done = slots[0].rows == 0;
    std::mutex err_mu;
    std::exception_ptr err;
    std::atomic<bool> failed{false};

    auto run_task = [&](size_t k, std::vector<float>& sa, std::vector<float>& sb) {
        Slot& s = slots[cur];
        Slot& nx = slots[cur ^ 1];
        switch (k) {
            case 0:
                nx.first_row = s.first_row + s.rows;
                nx.rows = ra.read_rows(nx.a.data(), batch);
                return;
            case 1: rb.read_rows(nx.b.data(), batch); return;
            case 2: if (opt.md5) md5a.update(s.a.data(), s.rows * rba); return;
            case 3: if (opt.md5) md5b.update(s.b.data(), s.rows * rbb); return;
            default: {
                const size_t r = k - 4;
                const uint64_t row = s.first_row + r;
                process_row(res, reinterpret_cast<const uint8_t*>(s.a.data()) + r * rba,
                            reinterpret_cast<const uint8_t*>(s.b.data()) + r * rbb, sa, sb, row, targets,
                            res.per_row[row]);
            }
        }
    };
    auto on_batch_end = [&]() noexcept {
        cur ^= 1;
        next_task.store(0);
        ntasks = 4 + slots[cur].rows;
        done = failed.load() || slots[cur].rows == 0;
        if (opt.progress && !failed.load()) {
            try {
                opt.progress(slots[cur].first_row, res.rows);
            } catch (...) {  // a display that fails is no reason to stop the diff
            }
        }
    };
    // The barrier is sized to the threads that exist: they are created first and wait for it, and
    // when the system refuses a thread the run goes on with those it has.
    std::optional<std::barrier<decltype(on_batch_end)>> sync;
    std::mutex start_mu;
    std::condition_variable start_cv;
    bool started = false;
    auto worker = [&]() {
        {
            std::unique_lock<std::mutex> lock(start_mu);
            start_cv.wait(lock, [&] { return started; });
        }
        std::vector<float> sa, sb;
        if (res.ha.dtype != Dtype::f32) sa.resize(res.ha.vocab);
        if (res.hb.dtype != Dtype::f32) sb.resize(res.hb.vocab);
        while (!done) {
            for (size_t k; (k = next_task.fetch_add(1)) < ntasks;) {
                if (failed.load()) break;
                try {
                    run_task(k, sa, sb);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(err_mu);
                    if (!err) err = std::current_exception();
                    failed.store(true);
                }
            }
            sync->arrive_and_wait();
        }
    };
    {
        std::vector<std::jthread> pool;
        pool.reserve(nt);
        for (unsigned t = 1; t < nt; ++t) {
            try {
                pool.emplace_back(worker);
            } catch (const std::system_error&) {
                break;  // no more threads to be had: fewer workers, same results
            }
        }
        res.threads = static_cast<unsigned>(pool.size()) + 1;
        sync.emplace(static_cast<std::ptrdiff_t>(res.threads), on_batch_end);
        {
            std::lock_guard<std::mutex> lock(start_mu);
            started = true;
        }
        start_cv.notify_all();
        worker();
    }
    if (err) std::rethrow_exception(err);

    const auto ta = ra.finish(), tb = rb.finish();
    if (opt.md5) {
        md5a.update(ta.stored.data(), ta.stored.size());
        md5b.update(tb.stored.data(), tb.stored.size());
        res.md5_a = md5a.hex();
        res.md5_b = md5b.hex();
    }
    summarise(res, targets);
    res.files_identical = prefix_same && res.logits_identical && ta.stored == tb.stored;
    if (res.first_diff_row >= 0) {
        const RowResult& x = res.per_row[static_cast<size_t>(res.first_diff_row)];
        res.first_diff_id = x.first_diff;
        res.first_diff_a = read_value(path_a, res.ha, static_cast<uint64_t>(res.first_diff_row), x.first_diff);
        res.first_diff_b = read_value(path_b, res.hb, static_cast<uint64_t>(res.first_diff_row), x.first_diff);
    }
    if (res.first_nonfinite_row >= 0) {
        const bool in_a = res.first_nonfinite_file == 'A';
        res.first_nonfinite_value = read_value(in_a ? path_a : path_b, in_a ? res.ha : res.hb,
                                               static_cast<uint64_t>(res.first_nonfinite_row), res.first_nonfinite_id);
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

// ---------------------------------------------------------------------------------------------
// Printing

namespace {

std::string value_str(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(v), f32_bits(v));
    return buf;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

void print_text(const DiffResult& r, std::FILE* out) {
    if (!r.md5_a.empty()) {
        std::fprintf(out, "%s  %s\n", r.md5_a.c_str(), r.path_a.c_str());
        std::fprintf(out, "%s  %s\n", r.md5_b.c_str(), r.path_b.c_str());
    }
    std::fprintf(out, "files        : %s\n",
                 r.files_identical ? "identical"
                 : r.logits_identical ? "differ (header or ids only; the logits are identical)"
                                      : "differ");
    if (r.logits_identical) {
        std::fprintf(out, "logits       : identical\n");
    } else if (r.ha.dtype != r.hb.dtype) {
        std::fprintf(out, "logits       : differ (dtypes %s vs %s)\n", dtype_name(r.ha.dtype), dtype_name(r.hb.dtype));
    } else {
        std::fprintf(out, "logits       : differ in %llu of %llu rows; first at row %lld, vocab id %u: A %s, B %s\n",
                     static_cast<unsigned long long>(r.rows_differ), static_cast<unsigned long long>(r.rows),
                     static_cast<long long>(r.first_diff_row), r.first_diff_id, value_str(r.first_diff_a).c_str(),
                     value_str(r.first_diff_b).c_str());
    }
    std::fprintf(out, "shape        : %llu rows x %u vocab, A %s, B %s\n", static_cast<unsigned long long>(r.rows),
                 r.ha.vocab, dtype_name(r.ha.dtype), dtype_name(r.hb.dtype));
    std::fprintf(out, "model        : A %s, B %s\n", quoted(r.ha.model).c_str(), quoted(r.hb.model).c_str());
    if (r.first_nonfinite_row >= 0)
        std::fprintf(out, "non-finite   : %llu rows have NaN or infinite logits (excluded below); first: row %lld, file %c, vocab id %u = %g\n",
                     static_cast<unsigned long long>(r.rows - r.finite_rows), static_cast<long long>(r.first_nonfinite_row),
                     r.first_nonfinite_file, r.first_nonfinite_id, static_cast<double>(r.first_nonfinite_value));
    else
        std::fprintf(out, "non-finite   : none\n");

    std::fprintf(out, "\n====== argmax (top-1) ======\n");
    std::fprintf(out, "Same top-1   : %.9f (%llu of %llu rows)\n", r.top1, static_cast<unsigned long long>(r.top1_same),
                 static_cast<unsigned long long>(r.finite_rows));
    std::fprintf(out, "Same top p   : %.3f ± %.3f %%\n", 100 * r.top1, 100 * r.top1_se);
    if (r.first_top1_diff_row >= 0) {
        const RowResult& x = r.per_row[static_cast<size_t>(r.first_top1_diff_row)];
        std::fprintf(out, "First differ : row %lld: A id %u logit %.9g, B id %u logit %.9g\n",
                     static_cast<long long>(r.first_top1_diff_row), x.argmax_a, static_cast<double>(x.max_a), x.argmax_b,
                     static_cast<double>(x.max_b));
    }
    if (r.rows) {
        const RowResult& x = r.per_row.back();
        std::fprintf(out, "Last row     : row %llu: A id %u logit %.9g, B id %u logit %.9g\n",
                     static_cast<unsigned long long>(r.rows - 1), x.argmax_a, static_cast<double>(x.max_a), x.argmax_b,
                     static_cast<double>(x.max_b));
    }

    std::fprintf(out, "\n====== KL divergence KL(A||B), %llu rows ======\n", static_cast<unsigned long long>(r.finite_rows));
    std::fprintf(out, "Mean    KLD: %.18g ± %.6g\n", r.kld_mean, r.kld_se);
    const std::pair<const char*, double> rows[] = {
        {"Maximum KLD", r.kld.max}, {"99.9%   KLD", r.kld.p999}, {"99.0%   KLD", r.kld.p99}, {"95.0%   KLD", r.kld.p95},
        {"90.0%   KLD", r.kld.p90}, {"Median  KLD", r.kld.p50}, {"10.0%   KLD", r.kld.p10}, {" 5.0%   KLD", r.kld.p05},
        {" 1.0%   KLD", r.kld.p01}, {" 0.1%   KLD", r.kld.p001}, {"Minimum KLD", r.kld.min}};
    for (const auto& [name, v] : rows) std::fprintf(out, "%s: %.12g\n", name, v);

    if (r.target_rows) {
        std::fprintf(out, "\n====== targets, %llu rows ======\n", static_cast<unsigned long long>(r.target_rows));
        std::fprintf(out, "PPL(A)            : %.12g ± %.6g\n", r.ppl_a, r.ppl_a * r.nll_a_se);
        std::fprintf(out, "PPL(B)            : %.12g ± %.6g\n", r.ppl_b, r.ppl_b * r.nll_b_se);
        std::fprintf(out, "ln(PPL(B)/PPL(A)) : %.12g ± %.6g\n", r.ln_ppl_ratio, r.ln_ppl_ratio_se);
        std::fprintf(out, "PPL(B)/PPL(A)     : %.12g ± %.6g\n", r.ppl_ratio, r.ppl_ratio_se);
        std::fprintf(out, "PPL(B)-PPL(A)     : %.12g ± %.6g\n", r.ppl_diff, r.ppl_diff_se);
        std::fprintf(out, "Cor(ln p_A, ln p_B): %.6f %% (Pearson, target log-probabilities)\n", 100 * r.logp_corr);
        std::fprintf(out, "Mean Δp (B - A)   : %.9f ± %.6f %%\n", 100 * r.dp_mean, 100 * r.dp_se);
        std::fprintf(out, "RMS  Δp           : %.9f %%\n", 100 * r.dp_rms);
        std::fprintf(out, "Max  Δp           : %.9f %%\n", 100 * r.dp_max);
        std::fprintf(out, "Min  Δp           : %.9f %%\n", 100 * r.dp_min);
        const std::pair<const char*, double> dps[] = {
            {"99.9%  Δp", r.dp.p999}, {"99.0%  Δp", r.dp.p99}, {"95.0%  Δp", r.dp.p95}, {"90.0%  Δp", r.dp.p90},
            {"75.0%  Δp", r.dp.p75}, {"Median Δp", r.dp.p50}, {"25.0%  Δp", r.dp.p25}, {"10.0%  Δp", r.dp.p10},
            {" 5.0%  Δp", r.dp.p05}, {" 1.0%  Δp", r.dp.p01}, {" 0.1%  Δp", r.dp.p001}};
        for (const auto& [name, v] : dps) std::fprintf(out, "%s         : %.9f %%\n", name, 100 * v);
    }
}

nlohmann::json to_json(const DiffResult& r) {
    using nlohmann::json;
    auto file = [](const std::string& path, const Header& h, uint64_t size, const std::string& md5) {
        json j = {{"path", path}, {"version", h.version}, {"dtype", dtype_name(h.dtype)}, {"vocab", h.vocab},
                  {"rows", h.rows}, {"model", h.model}, {"token_ids", h.has_tokens()},
                  {"target_ids", h.has_targets()}, {"bytes", size}};
        if (!md5.empty()) j["md5"] = md5;
        return j;
    };
    json j;
    j["a"] = file(r.path_a, r.ha, r.size_a, r.md5_a);
    j["b"] = file(r.path_b, r.hb, r.size_b, r.md5_b);
    j["files_identical"] = r.files_identical;
    j["logits_identical"] = r.logits_identical;
    j["rows"] = r.rows;
    j["rows_differ"] = r.rows_differ;
    if (r.first_diff_row >= 0)
        j["first_difference"] = {{"row", r.first_diff_row}, {"vocab_id", r.first_diff_id},
                                 {"a", num(r.first_diff_a)}, {"b", num(r.first_diff_b)},
                                 {"a_bits", f32_bits(r.first_diff_a)}, {"b_bits", f32_bits(r.first_diff_b)}};
    j["finite_rows"] = r.finite_rows;
    j["nonfinite_rows"] = r.rows - r.finite_rows;
    if (r.first_nonfinite_row >= 0)
        j["first_nonfinite"] = {{"row", r.first_nonfinite_row}, {"file", std::string(1, r.first_nonfinite_file)},
                                {"vocab_id", r.first_nonfinite_id}, {"value", std::to_string(r.first_nonfinite_value)}};
    j["top1"] = {{"same", r.top1_same}, {"fraction", num(r.top1)}, {"fraction_se", num(r.top1_se)},
                 {"first_differ_row", r.first_top1_diff_row}};
    char mean18[64];
    std::snprintf(mean18, sizeof mean18, "%.18g", r.kld_mean);
    j["kld"] = {{"mean", num(r.kld_mean)}, {"mean_18", mean18}, {"mean_se", num(r.kld_se)},
                {"max", num(r.kld.max)}, {"p99.9", num(r.kld.p999)}, {"p99", num(r.kld.p99)}, {"p95", num(r.kld.p95)},
                {"p90", num(r.kld.p90)}, {"p50", num(r.kld.p50)}, {"p10", num(r.kld.p10)}, {"p5", num(r.kld.p05)},
                {"p1", num(r.kld.p01)}, {"p0.1", num(r.kld.p001)}, {"min", num(r.kld.min)}};
    if (r.target_rows)
        j["targets"] = {{"rows", r.target_rows}, {"ppl_a", num(r.ppl_a)}, {"ppl_b", num(r.ppl_b)},
                        {"nll_a", num(r.nll_a)}, {"nll_a_se", num(r.nll_a_se)}, {"nll_b", num(r.nll_b)},
                        {"nll_b_se", num(r.nll_b_se)}, {"ln_ppl_ratio", num(r.ln_ppl_ratio)},
                        {"ln_ppl_ratio_se", num(r.ln_ppl_ratio_se)}, {"dp_mean", num(r.dp_mean)},
                        {"dp_se", num(r.dp_se)}, {"dp_rms", num(r.dp_rms)}, {"dp_max", num(r.dp_max)},
                        {"dp_min", num(r.dp_min)}, {"ppl_ratio", num(r.ppl_ratio)}, {"ppl_ratio_se", num(r.ppl_ratio_se)},
                        {"ppl_diff", num(r.ppl_diff)}, {"ppl_diff_se", num(r.ppl_diff_se)},
                        {"logp_correlation", num(r.logp_corr)},
                        {"dp_percentiles", {{"max", num(r.dp.max)}, {"p99.9", num(r.dp.p999)}, {"p99", num(r.dp.p99)},
                                            {"p95", num(r.dp.p95)}, {"p90", num(r.dp.p90)}, {"p75", num(r.dp.p75)},
                                            {"p50", num(r.dp.p50)}, {"p25", num(r.dp.p25)}, {"p10", num(r.dp.p10)},
                                            {"p5", num(r.dp.p05)}, {"p1", num(r.dp.p01)}, {"p0.1", num(r.dp.p001)},
                                            {"min", num(r.dp.min)}}}};
    json kld = json::array(), aa = json::array(), la = json::array(), ab = json::array(), lb = json::array(),
         fd = json::array(), nf = json::array();
    for (const RowResult& x : r.per_row) {
        kld.push_back(num(x.kld));
        aa.push_back(x.argmax_a);
        la.push_back(num(x.max_a));
        ab.push_back(x.argmax_b);
        lb.push_back(num(x.max_b));
        fd.push_back(x.first_diff == kSameRow ? json(nullptr) : json(x.first_diff));
        nf.push_back(x.nonfinite);
    }
    j["per_row"] = {{"kld", kld}, {"argmax_a", aa}, {"logit_a", la}, {"argmax_b", ab}, {"logit_b", lb},
                    {"first_diff_id", fd}, {"nonfinite", nf}};
    j["threads"] = r.threads;
    j["seconds"] = r.seconds;
    return j;
}

}  // namespace bitgate::spkl
