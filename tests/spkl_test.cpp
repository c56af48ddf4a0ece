// .spkl files: format bytes, digest, md5, KL divergence against closed forms and a plain double
// reference, determinism across thread counts and batch sizes, every bad-input case, npy and CLI.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <xxhash.h>

#include <bitgate/f16.hpp>

#include "cli.hpp"
#include "errors.hpp"
#include "spkl.hpp"
#include "spkl_diff.hpp"
#include "spkl_math.hpp"
#include "npy.hpp"

// Built with AddressSanitizer: g++ says so by __SANITIZE_ADDRESS__, clang 14 only by __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define BITGATE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BITGATE_TEST_ASAN 1
#endif
#endif

namespace {

using namespace bitgate;
using namespace bitgate::spkl;
namespace fs = std::filesystem;
using Rows = std::vector<std::vector<float>>;

class SpklTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("bitgate_spkl_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

std::string write_spkl(const std::string& path, const Rows& rows, Dtype dt = Dtype::f32, std::string model = "test",
                       std::vector<uint32_t> tokens = {}, std::vector<uint32_t> targets = {}) {
    Header h;
    h.dtype = dt;
    h.vocab = static_cast<uint32_t>(rows.at(0).size());
    h.rows = rows.size();
    h.model = std::move(model);
    Writer w(path, h, tokens, targets);
    for (const auto& r : rows) w.write_row(r.data());
    w.finish();
    return path;
}

std::vector<uint8_t> slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void spit(const std::string& p, const std::vector<uint8_t>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
uint32_t le32(const std::vector<uint8_t>& b, size_t o) {
    return b[o] | b[o + 1] << 8 | b[o + 2] << 16 | uint32_t(b[o + 3]) << 24;
}

Rows random_rows(uint64_t seed, size_t rows, size_t vocab, float scale) {
    std::mt19937_64 g(seed);
    std::normal_distribution<float> n(0.0f, scale);
    Rows r(rows, std::vector<float>(vocab));
    for (auto& row : r)
        for (float& x : row) x = n(g);
    return r;
}

// The plain reference: log-softmax with libm, summed left to right, in long double (x87, 64-bit
// significand) so that its own rounding stays well below the tolerance the tests ask of ours.
double ref_kld(const std::vector<float>& a, const std::vector<float>& b) {
    using ld = long double;
    auto log_softmax = [](const std::vector<float>& x) {
        ld m = -INFINITY;
        for (float v : x) m = std::max(m, ld(v));
        ld s = 0;
        for (float v : x) s += std::exp(ld(v) - m);
        std::vector<ld> l(x.size());
        for (size_t i = 0; i < x.size(); ++i) l[i] = ld(x[i]) - m - std::log(s);
        return l;
    };
    const auto la = log_softmax(a), lb = log_softmax(b);
    ld k = 0;
    for (size_t i = 0; i < a.size(); ++i) k += std::exp(la[i]) * (la[i] - lb[i]);
    return static_cast<double>(k);
}

bool one_line_starting_with(const std::string& msg, const std::string& prefix) {
    return msg.rfind(prefix, 0) == 0 && msg.find('\n') == std::string::npos;
}

template <class F>
std::string bad_input_message(F&& f) {
    try {
        f();
    } catch (const BadInput& e) {
        return e.what();
    }
    return "(no BadInput thrown)";
}

// ---- hashes and primitives ---------------------------------------------------------------------

TEST(SpklMd5, KnownDigests) {
    // RFC 1321's test suite.
    Md5 a;
    a.update("abc", 3);
    EXPECT_EQ(a.hex(), "900150983cd24fb0d6963f7d28e17f72");
    Md5 e;
    EXPECT_EQ(e.hex(), "d41d8cd98f00b204e9800998ecf8427e");
}

TEST(SpklMath, ExpAndLogAgainstLongDouble) {
    std::mt19937_64 g(7);
    auto ulps = [](double got, long double ref) {
        const double r = static_cast<double>(ref);
        const double u = std::nextafter(r, INFINITY) - r;
        return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / u);
    };
    double worst_exp = 0, worst_log = 0;
    for (int i = 0; i < 200000; ++i) {
        const double x = -708.0 + 1417.0 * std::ldexp(static_cast<double>(g() >> 11), -53);
        worst_exp = std::max(worst_exp, ulps(det_exp(x), std::exp(static_cast<long double>(x))));
        uint64_t bits = g() & 0x7fefffffffffffffull;
        const double y = std::bit_cast<double>(bits);
        if (y > 0) worst_log = std::max(worst_log, ulps(det_log(y), std::log(static_cast<long double>(y))));
        const double z = 0.5 + std::ldexp(static_cast<double>(g() >> 11), -53);  // near 1, where log is small
        worst_log = std::max(worst_log, ulps(det_log(z), std::log(static_cast<long double>(z))));
    }
    double worst_log1p = 0;
    for (int i = 0; i < 200000; ++i) {
        const double u = std::ldexp(static_cast<double>(g() >> 11), -53);
        const double x = i % 2 ? u - 0.5 : std::ldexp(u - 0.5, -static_cast<int>(g() % 60));  // and tiny ones
        worst_log1p = std::max(worst_log1p, ulps(det_log1p(x), std::log1p(static_cast<long double>(x))));
    }
    EXPECT_LE(worst_exp, 2.0);
    EXPECT_LE(worst_log, 2.0);
    EXPECT_LE(worst_log1p, 3.0);
    EXPECT_EQ(det_log1p(0.0), 0.0);
    EXPECT_EQ(det_exp(0.0), 1.0);
    EXPECT_EQ(det_log(1.0), 0.0);
    EXPECT_EQ(det_exp(-709.0), 0.0);
    EXPECT_EQ(det_exp(-INFINITY), 0.0);
    EXPECT_EQ(det_log(4.0), std::log(4.0));
    EXPECT_NEAR(det_log(5e-324), std::log(5e-324), 1e-12);  // subnormal input
}

TEST(SpklMath, PercentileIsLinearBetweenRanks) {
    const std::vector<double> v = {1, 2, 3, 4, 5};
    EXPECT_EQ(percentile(v, 50, 100), 3.0);
    EXPECT_DOUBLE_EQ(percentile(v, 10, 100), 1.4);
    EXPECT_DOUBLE_EQ(percentile(v, 999, 1000), 4.996);
    EXPECT_EQ(percentile({7.0}, 99, 100), 7.0);
    EXPECT_EQ(percentile({1.0, 3.0}, 50, 100), 2.0);  // the median of an even count: the mean of the middle two
}

TEST(SpklMath, NeumaierKeepsWhatNaiveSummationLoses) {
    const std::vector<double> v = {1.0, 1e100, 1.0, -1e100};
    EXPECT_EQ(neumaier_sum(v), 2.0);
}

// ---- format --------------------------------------------------------------------------------------

TEST_F(SpklTest, LayoutIsWhatTheDocsSay) {
    const Rows rows = {{1.0f, -2.0f, 3.5f}, {0.25f, 0.0f, -0.0f}};
    const std::string p =
        write_spkl(path("a.spkl"), rows, Dtype::f32, "m-1", std::vector<uint32_t>{11, 12}, std::vector<uint32_t>{2, kNoTarget});
    const auto b = slurp(p);
    const uint8_t magic[8] = {0x89, 'S', 'P', 'K', 'L', 0x0d, 0x0a, 0x1a};
    ASSERT_EQ(std::memcmp(b.data(), magic, 8), 0);
    EXPECT_EQ(le32(b, 8), 1u);   // version
    EXPECT_EQ(le32(b, 12), 0u);  // dtype f32
    EXPECT_EQ(le32(b, 16), 3u);  // flags: tokens | targets
    EXPECT_EQ(le32(b, 20), 3u);  // vocab
    EXPECT_EQ(le32(b, 24), 2u);  // rows, low word
    EXPECT_EQ(le32(b, 28), 0u);  // rows, high word
    EXPECT_EQ(le32(b, 32), 3u);  // model length
    EXPECT_EQ(le32(b, 36), 0u);  // reserved
    EXPECT_EQ(std::string(b.begin() + 40, b.begin() + 43), "m-1");
    // ids at align8(40 + 3) = 48: tokens then targets; logits at align64(48 + 16) = 64.
    EXPECT_EQ(le32(b, 48), 11u);
    EXPECT_EQ(le32(b, 52), 12u);
    EXPECT_EQ(le32(b, 56), 2u);
    EXPECT_EQ(le32(b, 60), 0xffffffffu);
    ASSERT_EQ(b.size(), 64u + 2 * 3 * 4 + 16);
    float x;
    std::memcpy(&x, b.data() + 64 + 4 * 2, 4);
    EXPECT_EQ(x, 3.5f);
    std::memcpy(&x, b.data() + 64 + 4 * 5, 4);
    EXPECT_TRUE(std::signbit(x));
    // The digest: XXH3-128 of every byte before it, canonical (big-endian).
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits(b.data(), b.size() - 16));
    EXPECT_EQ(std::memcmp(c.digest, b.data() + b.size() - 16, 16), 0);
}

TEST_F(SpklTest, RoundTripAllDtypes) {
    const Rows rows = random_rows(3, 5, 77, 3.0f);
    for (Dtype dt : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
        const std::string p = write_spkl(path(std::string("r_") + dtype_name(dt)), rows, dt, "round trip", {},
                                         {1, 2, 3, kNoTarget, 76});
        Reader r(p);
        EXPECT_EQ(r.header().dtype, dt);
        EXPECT_EQ(r.header().vocab, 77u);
        EXPECT_EQ(r.header().rows, 5u);
        EXPECT_EQ(r.header().model, "round trip");
        EXPECT_TRUE(r.token_ids().empty());
        EXPECT_EQ(r.target_ids(), (std::vector<uint32_t>{1, 2, 3, kNoTarget, 76}));
        std::vector<uint8_t> raw(r.header().row_bytes());
        std::vector<float> got(77);
        for (const auto& want : rows) {
            ASSERT_EQ(r.read_rows(raw.data(), 1), 1u);
            to_f32(dt, raw.data(), got.data(), 77);
            for (size_t i = 0; i < 77; ++i) {
                const float w = dt == Dtype::f32   ? want[i]
                                : dt == Dtype::f16 ? f16_to_f32(f32_to_f16_rn(want[i]))
                                                   : f32_from_bits((f32_bits(want[i]) + 0x7fffu + ((f32_bits(want[i]) >> 16) & 1u)) & 0xffff0000u);
                ASSERT_EQ(f32_bits(got[i]), f32_bits(w)) << dtype_name(dt) << " id " << i;
            }
        }
        EXPECT_EQ(r.read_rows(raw.data(), 1), 0u);
        EXPECT_TRUE(r.finish().ok());
        EXPECT_EQ(fs::file_size(p), r.header().file_size());
    }
}

TEST_F(SpklTest, EmptyFileIsValid) {
    Header h;
    h.vocab = 5;
    h.rows = 0;
    Writer w(path("e.spkl"), h);
    w.finish();
    EXPECT_EQ(fs::file_size(path("e.spkl")), 64u + 16u);
    const DiffResult r = diff(path("e.spkl"), path("e.spkl"), {});
    EXPECT_TRUE(r.files_identical);
    EXPECT_EQ(r.rows, 0u);
    EXPECT_TRUE(std::isnan(r.kld_mean));
    EXPECT_TRUE(check_file(path("e.spkl"), true).digest_ok);
}

TEST_F(SpklTest, Md5MatchesMd5sum) {
    const std::string p = write_spkl(path("m.spkl"), random_rows(1, 3, 1000, 2.0f));
    std::FILE* pipe = ::popen(("md5sum '" + p + "'").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buf[256] = {};
    ASSERT_NE(std::fgets(buf, sizeof buf, pipe), nullptr);
    ::pclose(pipe);
    const std::string md5sum_line(buf);
    EXPECT_EQ(check_file(p, true).md5, md5sum_line.substr(0, 32));
    const DiffResult r = diff(p, p, {});
    EXPECT_EQ(r.md5_a, md5sum_line.substr(0, 32));
    EXPECT_EQ(r.md5_b, r.md5_a);
}

// ---- KL divergence ---------------------------------------------------------------------------

TEST_F(SpklTest, SelfDiffIsExactlyZero) {
    for (Dtype dt : {Dtype::f32, Dtype::f16, Dtype::bf16}) {
        const std::string p = write_spkl(path("s"), random_rows(5, 9, 4099, 4.0f), dt);
        const DiffResult r = diff(p, p, {});
        EXPECT_TRUE(r.files_identical);
        EXPECT_TRUE(r.logits_identical);
        EXPECT_EQ(r.top1, 1.0);
        EXPECT_EQ(r.top1_same, 9u);
        EXPECT_EQ(r.rows_differ, 0u);
        EXPECT_EQ(r.first_diff_row, -1);
        for (const RowResult& x : r.per_row) EXPECT_EQ(std::bit_cast<uint64_t>(x.kld), 0u);  // +0.0 exactly
        EXPECT_EQ(r.kld_mean, 0.0);
        EXPECT_EQ(r.kld.max, 0.0);
        EXPECT_EQ(r.kld.min, 0.0);
    }
}

TEST_F(SpklTest, TwoTokenClosedForm) {
    // A = (0, 0): p = (1/2, 1/2); B = (0, 1): q = (1, e)/(1 + e). KL = log((1 + e)/2) - 1/2.
    const std::string a = write_spkl(path("a"), {{0.0f, 0.0f}});
    const std::string b = write_spkl(path("b"), {{0.0f, 1.0f}});
    const double want = std::log((1.0 + std::exp(1.0)) / 2.0) - 0.5;
    const DiffResult r = diff(a, b, {});
    EXPECT_NEAR(r.kld_mean, want, 1e-15 * want);
    EXPECT_EQ(r.top1, 0.0);  // a tie goes to the first index: A's argmax is 0, B's is 1
    EXPECT_EQ(r.per_row[0].argmax_a, 0u);
    EXPECT_EQ(r.per_row[0].argmax_b, 1u);
    EXPECT_EQ(r.first_diff_row, 0);
    EXPECT_EQ(r.first_diff_id, 1u);
}

TEST_F(SpklTest, ThreeTokenClosedForms) {
    const double e = std::exp(1.0);
    {
        // A = (1, 2, 3), B = (3, 2, 1): the normalisers are equal, KL = 2 (p3 - p1) = 2 (e^2 - 1) / (1 + e + e^2).
        const std::string a = write_spkl(path("a"), {{1.0f, 2.0f, 3.0f}});
        const std::string b = write_spkl(path("b"), {{3.0f, 2.0f, 1.0f}});
        const double want = 2.0 * (e * e - 1.0) / (1.0 + e + e * e);
        EXPECT_NEAR(diff(a, b, {}).kld_mean, want, 1e-15 * want);
        EXPECT_EQ(diff(a, b, {}).top1, 0.0);
    }
    {
        // A uniform, B nearly excludes token 2: KL = log((2 + e^-100) / 3) + 100/3.
        const std::string a = write_spkl(path("c"), {{0.0f, 0.0f, 0.0f}});
        const std::string b = write_spkl(path("d"), {{0.0f, 0.0f, -100.0f}});
        const double want = std::log((2.0 + std::exp(-100.0)) / 3.0) + 100.0 / 3.0;
        EXPECT_NEAR(diff(a, b, {}).kld_mean, want, 1e-15 * want);
    }
}

TEST_F(SpklTest, ShiftedLogitsHaveZeroDivergence) {
    // Softmax ignores a constant shift; 0.5 is exact to add to these values, so only rounding in
    // the sums is left.
    Rows a = random_rows(9, 4, 5003, 1.0f), b = a;
    for (auto& row : a)
        for (float& x : row) x = std::round(x * 1024.0f) / 1024.0f;
    b = a;
    for (auto& row : b)
        for (float& x : row) x += 0.5f;
    const DiffResult r = diff(write_spkl(path("a"), a), write_spkl(path("b"), b), {});
    for (const RowResult& x : r.per_row) EXPECT_LT(std::fabs(x.kld), 1e-15);
    EXPECT_EQ(r.top1, 1.0);
}

TEST_F(SpklTest, AgreesWithPlainDoubleReference) {
    for (const size_t vocab : {1u, 7u, 8u, 9u, 1003u, 32000u}) {
        const Rows a = random_rows(11 + vocab, 13, vocab, 3.0f);
        Rows b = random_rows(17 + vocab, 13, vocab, 3.0f);
        for (size_t r = 0; r < 13; ++r)  // a mix of near and far rows
            if (r % 2)
                for (size_t i = 0; i < vocab; ++i) b[r][i] = a[r][i] + 0.25f * b[r][i];
        const std::vector<uint32_t> targets = [&] {
            std::vector<uint32_t> t(13);
            for (size_t r = 0; r < 13; ++r) t[r] = static_cast<uint32_t>((r * 7919) % vocab);
            return t;
        }();
        const DiffResult res = diff(write_spkl(path("a"), a, Dtype::f32, "a", {}, targets),
                                    write_spkl(path("b"), b, Dtype::f32, "b", {}, targets), {});
        double sum = 0, nll_a = 0, nll_b = 0;
        std::vector<double> ref(13);
        for (size_t r = 0; r < 13; ++r) {
            ref[r] = ref_kld(a[r], b[r]);
            sum += ref[r];
            const double tol = vocab == 1 ? 0.0 : 1e-12 * std::fabs(ref[r]);
            EXPECT_NEAR(res.per_row[r].kld, ref[r], tol) << "vocab " << vocab << " row " << r;
            // Argmax: the first index of the maximum.
            const auto it = std::max_element(a[r].begin(), a[r].end());
            EXPECT_EQ(res.per_row[r].argmax_a, static_cast<uint32_t>(it - a[r].begin()));
            EXPECT_EQ(res.per_row[r].max_a, *it);
            // Target log-probabilities.
            auto logp = [](const std::vector<float>& x, uint32_t t) {
                double m = -INFINITY, s = 0;
                for (float v : x) m = std::max(m, double(v));
                for (float v : x) s += std::exp(double(v) - m);
                return double(x[t]) - m - std::log(s);
            };
            nll_a -= logp(a[r], targets[r]);
            nll_b -= logp(b[r], targets[r]);
        }
        EXPECT_NEAR(res.kld_mean, sum / 13, 1e-12 * sum / 13);
        EXPECT_NEAR(res.ppl_a, std::exp(nll_a / 13), 1e-11 * std::exp(nll_a / 13));
        EXPECT_NEAR(res.ppl_b, std::exp(nll_b / 13), 1e-11 * std::exp(nll_b / 13));
        EXPECT_EQ(res.target_rows, 13u);
        std::sort(ref.begin(), ref.end());
        EXPECT_NEAR(res.kld.max, ref.back(), 1e-12 * std::fabs(ref.back()) + 1e-300);
        EXPECT_NEAR(res.kld.p50, ref[6], 1e-12 * std::fabs(ref[6]) + 1e-300);
    }
}

TEST_F(SpklTest, NearbyRowsKeepTheirDigits) {
    // A quantized engine against its reference: per-logit differences of 1e-3 give KL near 1e-7.
    // Subtracting two normalisers of size log(vocab) would leave ~1e-15 absolute error (1e-8
    // relative); the difference form keeps it near the cost of rounding the exponentials.
    const Rows a = random_rows(91, 6, 32000, 3.0f);
    Rows b = random_rows(92, 6, 32000, 1e-3f);
    for (size_t r = 0; r < 6; ++r)
        for (size_t i = 0; i < 32000; ++i) b[r][i] += a[r][i];
    const DiffResult res = diff(write_spkl(path("a"), a), write_spkl(path("b"), b), {});
    for (size_t r = 0; r < 6; ++r) {
        const double ref = ref_kld(a[r], b[r]);
        EXPECT_GT(ref, 1e-8);
        EXPECT_NEAR(res.per_row[r].kld, ref, 1e-9 * ref) << "row " << r;
    }
}

TEST_F(SpklTest, SameBitsAtAnyThreadCountAndBatchSize) {
    const Rows a = random_rows(21, 37, 3001, 2.0f), b = random_rows(22, 37, 3001, 2.0f);
    const std::string pa = write_spkl(path("a"), a), pb = write_spkl(path("b"), b);
    DiffOptions base;
    base.threads = 1;
    const DiffResult r0 = diff(pa, pb, base);
    for (unsigned threads : {1u, 2u, 3u, 8u})
        for (size_t batch : {size_t{1}, size_t{50000}, size_t{1} << 22}) {
            DiffOptions o;
            o.threads = threads;
            o.batch_bytes = batch;
            const DiffResult r = diff(pa, pb, o);
            EXPECT_EQ(std::bit_cast<uint64_t>(r.kld_mean), std::bit_cast<uint64_t>(r0.kld_mean));
            EXPECT_EQ(std::bit_cast<uint64_t>(r.kld_se), std::bit_cast<uint64_t>(r0.kld_se));
            EXPECT_EQ(r.md5_a, r0.md5_a);
            EXPECT_EQ(r.md5_b, r0.md5_b);
            for (size_t i = 0; i < r.per_row.size(); ++i)
                ASSERT_EQ(std::bit_cast<uint64_t>(r.per_row[i].kld), std::bit_cast<uint64_t>(r0.per_row[i].kld));
        }
}

TEST_F(SpklTest, FirstDifferenceIsLocated) {
    Rows a = random_rows(31, 6, 100, 1.0f), b = a;
    b[4][57] = std::nextafter(b[4][57], INFINITY);
    b[5][3] = -b[5][3];
    const DiffResult r = diff(write_spkl(path("a"), a), write_spkl(path("b"), b), {});
    EXPECT_FALSE(r.files_identical);
    EXPECT_FALSE(r.logits_identical);
    EXPECT_EQ(r.rows_differ, 2u);
    EXPECT_EQ(r.first_diff_row, 4);
    EXPECT_EQ(r.first_diff_id, 57u);
    EXPECT_EQ(f32_bits(r.first_diff_a), f32_bits(a[4][57]));
    EXPECT_EQ(f32_bits(r.first_diff_b), f32_bits(b[4][57]));
    EXPECT_NE(r.md5_a, r.md5_b);
}

TEST_F(SpklTest, HeaderOnlyDifferenceKeepsLogitsIdentical) {
    const Rows a = random_rows(41, 3, 50, 1.0f);
    const DiffResult r = diff(write_spkl(path("a"), a, Dtype::f32, "main"), write_spkl(path("b"), a, Dtype::f32, "branch"), {});
    EXPECT_FALSE(r.files_identical);
    EXPECT_TRUE(r.logits_identical);
    EXPECT_EQ(r.kld_mean, 0.0);
}

TEST_F(SpklTest, NonFiniteLogitsAreAFindingNotACrash) {
    Rows a = random_rows(51, 8, 300, 1.0f), b = a;
    b[3][7] = std::numeric_limits<float>::quiet_NaN();
    a[5][299] = std::numeric_limits<float>::infinity();  // the ragged tail of a 16-lane scan
    b[6][0] = -std::numeric_limits<float>::infinity();
    const DiffResult r = diff(write_spkl(path("a"), a), write_spkl(path("b"), b), {});
    EXPECT_EQ(r.finite_rows, 5u);
    EXPECT_EQ(r.first_nonfinite_row, 3);
    EXPECT_EQ(r.first_nonfinite_file, 'B');
    EXPECT_EQ(r.first_nonfinite_id, 7u);
    EXPECT_TRUE(std::isnan(r.first_nonfinite_value));
    EXPECT_EQ(r.per_row[5].nonfinite, 1);
    EXPECT_EQ(r.per_row[5].bad_id, 299u);
    EXPECT_EQ(r.per_row[6].nonfinite, 2);
    EXPECT_TRUE(std::isnan(r.per_row[3].kld));
    EXPECT_EQ(r.kld_mean, 0.0);  // the five finite rows are identical
    EXPECT_EQ(r.top1_same, 5u);
}

// ---- bad input ---------------------------------------------------------------------------------

TEST_F(SpklTest, BadFilesAreOneLineErrorsNamingTheFile) {
    const Rows rows = random_rows(61, 4, 64, 1.0f);
    const std::string good = write_spkl(path("good"), rows);
    const auto bytes = slurp(good);
    auto variant = [&](const std::string& name, const std::function<void(std::vector<uint8_t>&)>& edit) {
        auto b = bytes;
        edit(b);
        spit(path(name), b);
        return path(name);
    };
    auto expect_bad = [&](const std::string& p, const std::string& what) {
        const std::string m1 = bad_input_message([&] { diff(good, p, {}); });
        EXPECT_TRUE(one_line_starting_with(m1, p + ": ")) << m1;
        EXPECT_NE(m1.find(what), std::string::npos) << m1;
        const std::string m2 = bad_input_message([&] { check_file(p, false); });
        EXPECT_TRUE(one_line_starting_with(m2, p + ": ")) << m2;
    };
    auto expect_digest_bad = [&](const std::string& p) {
        const std::string m1 = bad_input_message([&] { diff(good, p, {}); });
        EXPECT_TRUE(one_line_starting_with(m1, p + ": digest mismatch")) << m1;
        EXPECT_FALSE(check_file(p, false).digest_ok);  // info prints the mismatch, then fails
    };
    expect_bad(variant("cut_end", [](auto& b) { b.pop_back(); }), "truncated");
    expect_bad(variant("cut_row", [](auto& b) { b.resize(b.size() - 300); }), "truncated");
    expect_bad(variant("cut_header", [](auto& b) { b.resize(20); }), "truncated");
    expect_bad(variant("empty", [](auto& b) { b.clear(); }), "truncated");
    expect_bad(variant("magic", [](auto& b) { b[1] = 'X'; }), "wrong magic");
    expect_bad(variant("version", [](auto& b) { b[8] = 2; }), "unsupported version 2");
    expect_bad(variant("dtype", [](auto& b) { b[12] = 9; }), "dtype");
    expect_bad(variant("flags", [](auto& b) { b[16] = 0x10; }), "flags");
    expect_bad(variant("reserved", [](auto& b) { b[36] = 1; }), "reserved");
    expect_bad(variant("trailing", [](auto& b) { b.push_back(0); }), "trailing");
    expect_bad(variant("padding", [](auto& b) { b[47] = 1; }), "padding");
    // A flipped logit byte is caught by the digest (diff checks both files' digests).
    expect_digest_bad(variant("flipped", [](auto& b) { b[64 + 100] ^= 0x01; }));
    expect_digest_bad(variant("flipped_digest", [](auto& b) { b.back() ^= 0x80; }));

    const std::string other_vocab = write_spkl(path("v"), random_rows(62, 4, 65, 1.0f));
    std::string m = bad_input_message([&] { diff(good, other_vocab, {}); });
    EXPECT_TRUE(one_line_starting_with(m, good + " vs " + other_vocab + ": vocabulary sizes differ (64 vs 65)")) << m;
    const std::string other_rows = write_spkl(path("r"), random_rows(63, 5, 64, 1.0f));
    m = bad_input_message([&] { diff(good, other_rows, {}); });
    EXPECT_TRUE(one_line_starting_with(m, good + " vs " + other_rows + ": row counts differ (4 vs 5)")) << m;
    m = bad_input_message([&] { diff(good, path("missing"), {}); });
    EXPECT_TRUE(one_line_starting_with(m, path("missing") + ": cannot open")) << m;
    const std::string t1 = write_spkl(path("t1"), rows, Dtype::f32, "", {}, {1, 2, 3, 4});
    const std::string t2 = write_spkl(path("t2"), rows, Dtype::f32, "", {}, {1, 2, 9, 4});
    m = bad_input_message([&] { diff(t1, t2, {}); });
    EXPECT_NE(m.find("target ids differ at row 2"), std::string::npos) << m;
    EXPECT_NE(bad_input_message([&] { write_spkl(path("t3"), rows, Dtype::f32, "", {}, {1, 2, 64, 4}); })
                  .find("outside the vocabulary"),
              std::string::npos);
}

// ---- npy and the CLI ---------------------------------------------------------------------------

int run_cli(std::vector<std::string> args) {
    CLI::App app{"bitgate"};
    int rc = -1;
    add_spkl_verbs(app, rc);
    std::vector<const char*> argv = {"bitgate"};
    for (const auto& s : args) argv.push_back(s.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return rc;
}

// A .npy written by hand, the way NumPy writes version 1.0 (independent of NpyWriter).
void write_npy_by_hand(const std::string& p, const std::string& descr, const std::string& shape, const void* data,
                       size_t bytes) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + dict.size() + 1) % 64) dict += ' ';
    dict += '\n';
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(dict.size() & 0xff), uint8_t(dict.size() >> 8)};
    b.insert(b.end(), dict.begin(), dict.end());
    const auto* d = static_cast<const uint8_t*>(data);
    b.insert(b.end(), d, d + bytes);
    spit(p, b);
}

TEST_F(SpklTest, NpyRoundTripThroughTheCli) {
    const Rows rows = random_rows(71, 3, 10, 2.0f);
    std::vector<float> flat;
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    write_npy_by_hand(path("l.npy"), "<f4", "(3, 10)", flat.data(), flat.size() * 4);
    const int64_t tg[3] = {4, -1, 9};
    write_npy_by_hand(path("t.npy"), "<i8", "(3,)", tg, sizeof tg);
    EXPECT_EQ(run_cli({"spkl", "from-npy", path("l.npy"), path("l.spkl"), "--model", "npy model", "--targets", path("t.npy")}), 0);
    {
        Reader r(path("l.spkl"));
        EXPECT_EQ(r.header().model, "npy model");
        EXPECT_EQ(r.target_ids(), (std::vector<uint32_t>{4, kNoTarget, 9}));
        std::vector<float> got(30);
        ASSERT_EQ(r.read_rows(got.data(), 3), 3u);
        EXPECT_EQ(std::memcmp(got.data(), flat.data(), 120), 0);
        EXPECT_TRUE(r.finish().ok());
    }
    EXPECT_EQ(run_cli({"spkl", "to-npy", path("l.spkl"), path("back.npy"), "--targets", path("tb.npy")}), 0);
    const npy::Tensor back = npy::read(path("back.npy"));
    EXPECT_EQ(back.dtype, "<f4");
    EXPECT_EQ(back.shape, (std::vector<int64_t>{3, 10}));
    ASSERT_EQ(back.bytes.size(), 120u);
    EXPECT_EQ(std::memcmp(back.bytes.data(), flat.data(), 120), 0);
    EXPECT_EQ(npy::read_ids(path("tb.npy"), 3, true), (std::vector<uint32_t>{4, kNoTarget, 9}));

    // f16 logits stay f16.
    std::vector<uint16_t> h(30);
    for (size_t i = 0; i < 30; ++i) h[i] = f32_to_f16_rn(flat[i]);
    write_npy_by_hand(path("h.npy"), "<f2", "(3, 10)", h.data(), 60);
    EXPECT_EQ(run_cli({"spkl", "from-npy", path("h.npy"), path("h.spkl")}), 0);
    EXPECT_EQ(Reader(path("h.spkl")).header().dtype, Dtype::f16);

    // Bad arrays.
    const std::vector<double> flat8(flat.begin(), flat.end());
    write_npy_by_hand(path("f8.npy"), "<f8", "(3, 10)", flat8.data(), flat8.size() * 8);
    std::string m = bad_input_message([&] { run_cli({"spkl", "from-npy", path("f8.npy"), path("x.spkl")}); });
    EXPECT_TRUE(one_line_starting_with(m, path("f8.npy") + ": ")) << m;
    write_npy_by_hand(path("1d.npy"), "<f4", "(30,)", flat.data(), 120);
    m = bad_input_message([&] { run_cli({"spkl", "from-npy", path("1d.npy"), path("x.spkl")}); });
    EXPECT_NE(m.find("2-D"), std::string::npos) << m;
    write_npy_by_hand(path("short.npy"), "<f4", "(3, 10)", flat.data(), 100);
    m = bad_input_message([&] { run_cli({"spkl", "from-npy", path("short.npy"), path("x.spkl")}); });
    EXPECT_NE(m.find("truncated"), std::string::npos) << m;
    EXPECT_FALSE(fs::exists(path("x.spkl")));
}

TEST_F(SpklTest, CliExitCodes) {
    const Rows a = random_rows(81, 5, 200, 2.0f), b = random_rows(82, 5, 200, 2.0f);
    const std::string pa = write_spkl(path("a.spkl"), a), pb = write_spkl(path("b.spkl"), b);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pa, "--require-identical", "--max-mean-kld", "0"}), 0);
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pb}), 0);
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pb, "--require-identical"}), 1);
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pb, "--max-mean-kld", "1e-6"}), 1);
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pb, "--max-mean-kld", "1e6", "--json", path("d.json")}), 0);
    EXPECT_EQ(run_cli({"spkl", "kld", pa, pb, "--max-mean-kld", "1e6"}), 0);
    EXPECT_EQ(run_cli({"spkl", "info", pa, "--md5"}), 0);
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("Mean    KLD: 0 "), std::string::npos);
    EXPECT_NE(out.find("digest       : ok"), std::string::npos);
    const auto j = nlohmann::json::parse(std::ifstream(path("d.json")));
    EXPECT_EQ(j["rows"], 5);
    EXPECT_EQ(j["per_row"]["kld"].size(), 5u);
    EXPECT_EQ(j["files_identical"], false);
    EXPECT_EQ(j["a"]["md5"].get<std::string>().size(), 32u);

    auto flipped = slurp(pb);
    flipped[64 + 7] ^= 4;
    spit(path("bad.spkl"), flipped);
    ::testing::internal::CaptureStdout();
    const std::string m = bad_input_message([&] { run_cli({"spkl", "info", path("bad.spkl")}); });
    ::testing::internal::GetCapturedStdout();
    EXPECT_TRUE(one_line_starting_with(m, path("bad.spkl") + ": digest mismatch")) << m;
}

// ---- defects found by fuzzing, each pinned ------------------------------------------------------

size_t open_fds() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
    return n;
}

// A writer that fails (or is abandoned) leaves the old target exactly as it was.
TEST_F(SpklTest, FailedWriteKeepsTheOldTarget) {
    const std::vector<uint8_t> old = {'k', 'e', 'e', 'p'};
    spit(path("o.spkl"), old);
    {
        Header h;
        h.vocab = 4;
        h.rows = 2;
        Writer w(path("o.spkl"), h);
        const float row[4] = {1, 2, 3, 4};
        w.write_row(row);
        // destroyed before finish(): the run failed
    }
    EXPECT_EQ(slurp(path("o.spkl")), old);
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
    EXPECT_EQ(entries, 1u) << "a temporary file was left behind";
}

// A full device: one-line BadInput (exit 2) and the link to it is still there.
TEST_F(SpklTest, WriteToAFullDeviceIsBadInputAndRemovesNothing) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    fs::create_symlink("/dev/full", path("o.spkl"));
    ::testing::internal::CaptureStdout();
    std::string m = bad_input_message([&] { run_cli({"spkl", "synth", path("o.spkl"), "--vocab", "1000", "--rows", "100"}); });
    EXPECT_TRUE(one_line_starting_with(m, path("o.spkl") + ": write failed")) << m;
    EXPECT_TRUE(fs::is_symlink(path("o.spkl")));
    const std::string pa = write_spkl(path("a.spkl"), random_rows(5, 2, 8, 1.0f));
    m = bad_input_message([&] { run_cli({"spkl", "info", pa, "--json", "/dev/full"}); });
    EXPECT_TRUE(one_line_starting_with(m, "/dev/full: write failed")) << m;
    m = bad_input_message([&] { run_cli({"spkl", "diff", pa, pa, "--json", "/dev/full"}); });
    EXPECT_TRUE(one_line_starting_with(m, "/dev/full: write failed")) << m;
    m = bad_input_message([&] { run_cli({"spkl", "to-npy", pa, "/dev/full"}); });
    EXPECT_TRUE(one_line_starting_with(m, "/dev/full: write failed")) << m;
    ::testing::internal::GetCapturedStdout();
    EXPECT_TRUE(fs::exists("/dev/full"));
}

// An output that is the input (same inode, any spelling) is refused before anything is touched.
TEST_F(SpklTest, OutputThatIsTheInputIsRefused) {
    const std::string pa = write_spkl(path("v.spkl"), random_rows(6, 3, 10, 1.0f));
    const auto before = slurp(pa);
    std::string m = bad_input_message([&] { run_cli({"spkl", "to-npy", pa, path("./v.spkl")}); });
    EXPECT_TRUE(one_line_starting_with(m, path("./v.spkl") + ": is the input")) << m;
    EXPECT_EQ(slurp(pa), before);
    const std::vector<float> flat(30, 1.0f);
    write_npy_by_hand(path("x.npy"), "<f4", "(3, 10)", flat.data(), 120);
    const auto npy_before = slurp(path("x.npy"));
    m = bad_input_message([&] { run_cli({"spkl", "from-npy", path("x.npy"), path("x.npy")}); });
    EXPECT_TRUE(one_line_starting_with(m, path("x.npy") + ": is the input")) << m;
    EXPECT_EQ(slurp(path("x.npy")), npy_before);
}

// When the system refuses threads, diff goes on with those it got (it used to wait forever on a
// barrier sized for all of them). The child has a small address space, so thread stacks run out;
// an alarm turns a hang into a failure.
TEST_F(SpklTest, DiffSurvivesThreadCreationFailure) {
#if defined(BITGATE_TEST_ASAN)
    // AddressSanitizer maps its shadow and fake stacks far beyond any small RLIMIT_AS: the child
    // would die in ASan's own allocator, not in diff. The plain build runs this test.
    GTEST_SKIP() << "an address-space limit and AddressSanitizer cannot share a process";
#endif
    const std::string pa = write_spkl(path("a.spkl"), random_rows(7, 40, 64, 1.0f));
    const std::string pb = write_spkl(path("b.spkl"), random_rows(8, 40, 64, 1.0f));
    const double expect = diff(pa, pb, DiffOptions{.threads = 1}).kld_mean;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::alarm(60);
        struct rlimit rl {};
        ::getrlimit(RLIMIT_AS, &rl);
        // Current mappings plus room for a few 8 MiB stacks, not for 200.
        size_t vm = 0;
        std::ifstream st("/proc/self/statm");
        st >> vm;
        rl.rlim_cur = vm * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) + (size_t{96} << 20);
        ::setrlimit(RLIMIT_AS, &rl);
        try {
            const DiffResult r = diff(pa, pb, DiffOptions{.threads = 200});
            ::_exit(r.threads < 200 && r.kld_mean == expect ? 0 : 3);
        } catch (...) {
            ::_exit(4);
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "the diff hung or crashed (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "3: wrong result or all 200 threads made; 4: threw";
}

TEST_F(SpklTest, ThreadCountIsBounded) {
    const std::string pa = write_spkl(path("a.spkl"), random_rows(9, 4, 16, 1.0f));
    EXPECT_LE(diff(pa, pa, DiffOptions{.threads = 3000}).threads, kMaxThreads);
    EXPECT_THROW(run_cli({"spkl", "diff", pa, pa, "--threads", "100000"}), CLI::ParseError);
}

// Model identifiers are UTF-8 on the way in and on the way out: JSON can always hold them.
TEST_F(SpklTest, ModelIdMustBeUtf8) {
    Header h;
    h.vocab = 3;
    h.rows = 1;
    for (const char* m : {"\xff\xfe", "a\xc0\xafz", "\xed\xa0\x80", "\xe2\x82", "\xc2\x85"}) {
        h.model = m;
        const std::string msg = bad_input_message([&] { Writer w(path("u.spkl"), h); });
        EXPECT_TRUE(one_line_starting_with(msg, path("u.spkl") + ": model identifier")) << msg;
    }
    // The same bytes in a file made some other way: the reader says so (exit 2), never JSON's throw.
    const std::string p = write_spkl(path("ok.spkl"), {{1.0f, 2.0f, 3.0f}}, Dtype::f32, "ab");
    auto b = slurp(p);
    b[kFixedHeaderBytes] = 0xff;
    b[kFixedHeaderBytes + 1] = 0xfe;
    spit(path("bad.spkl"), b);
    const std::string msg = bad_input_message([&] { Reader r(path("bad.spkl")); });
    EXPECT_TRUE(one_line_starting_with(msg, path("bad.spkl") + ": model identifier is not valid UTF-8")) << msg;
    h.model = "Qwen2 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // é € and an emoji are fine
    EXPECT_NO_THROW(write_spkl(path("fine.spkl"), {{1.0f, 2.0f, 3.0f}}, Dtype::f32, h.model));
}

// .npy headers that numpy would read one way and a loose parser another are bad input.
TEST_F(SpklTest, FromNpyRejectsAmbiguousAndMalformedHeaders) {
    const std::vector<float> flat(6, 0.5f);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (3, 2), }", "given twice"},
        {"{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", "given twice"},
        {"{'descr': '<f4', 'fortran_order': banana, 'shape': (2, 3), }", "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } garbage", "after the closing brace"},
        {"{'descr': '<f4', garbage 'fortran_order': False, 'shape': (2, 3), }", "expected"},
    };
    int i = 0;
    for (const auto& [dict, what] : cases) {
        std::string d = dict;
        while ((10 + d.size() + 1) % 64) d += ' ';
        d += '\n';
        std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(d.size() & 0xff), uint8_t(d.size() >> 8)};
        b.insert(b.end(), d.begin(), d.end());
        const auto* f = reinterpret_cast<const uint8_t*>(flat.data());
        b.insert(b.end(), f, f + 24);
        const std::string p = path(std::to_string(i++) + ".npy");
        spit(p, b);
        const std::string m = bad_input_message([&] { run_cli({"spkl", "from-npy", p, path("x.spkl")}); });
        EXPECT_TRUE(one_line_starting_with(m, p + ": ")) << m;
        EXPECT_NE(m.find(what), std::string::npos) << dict << " -> " << m;
    }
    for (const uint8_t minor : {1, 9}) {
        write_npy_by_hand(path("v.npy"), "<f4", "(2, 3)", flat.data(), 24);
        auto b = slurp(path("v.npy"));
        b[7] = minor;
        spit(path("v.npy"), b);
        const std::string m = bad_input_message([&] { run_cli({"spkl", "from-npy", path("v.npy"), path("x.spkl")}); });
        EXPECT_NE(m.find("version 1." + std::to_string(minor) + " is not supported"), std::string::npos) << m;
    }
    EXPECT_FALSE(fs::exists(path("x.spkl")));
}

// Rejected files leave nothing open (the reader's constructor used to leak its descriptor and
// hash state on every error after open).
TEST_F(SpklTest, RejectedFilesLeakNoDescriptor) {
    const std::string p = write_spkl(path("a.spkl"), random_rows(10, 2, 8, 1.0f));
    auto b = slurp(p);
    b[0] = 'X';
    spit(path("magic.spkl"), b);
    spit(path("short.spkl"), std::vector<uint8_t>(b.begin(), b.begin() + 100));
    fs::create_directories(path("dir.spkl"));
    const size_t before = open_fds();
    for (int i = 0; i < 50; ++i)
        for (const char* f : {"magic.spkl", "short.spkl", "dir.spkl"}) EXPECT_THROW(Reader r(path(f)), BadInput);
    EXPECT_EQ(open_fds(), before);
}

// A bad id in --targets T.npy is T.npy's fault, and the message names it.
TEST_F(SpklTest, BadTargetIdNamesTheTargetsFile) {
    const std::vector<float> flat(6, 0.5f);
    write_npy_by_hand(path("l.npy"), "<f4", "(2, 3)", flat.data(), 24);
    const int64_t tg[2] = {1, 7};
    write_npy_by_hand(path("t.npy"), "<i8", "(2,)", tg, sizeof tg);
    const std::string m = bad_input_message([&] {
        run_cli({"spkl", "from-npy", path("l.npy"), path("o.spkl"), "--targets", path("t.npy")});
    });
    EXPECT_TRUE(one_line_starting_with(m, path("t.npy") + ": target id 7 at row 1")) << m;
    EXPECT_FALSE(fs::exists(path("o.spkl")));
}

TEST_F(SpklTest, SynthRefusesNegativeAndAbsurdSizes) {
    std::string m = bad_input_message([&] { run_cli({"spkl", "synth", path("s.spkl"), "--vocab", "3", "--rows", "-1"}); });
    EXPECT_NE(m.find("must be positive"), std::string::npos) << m;
    m = bad_input_message([&] { run_cli({"spkl", "synth", path("s.spkl"), "--vocab", "-5", "--rows", "1"}); });
    EXPECT_NE(m.find("must be positive"), std::string::npos) << m;
    m = bad_input_message([&] { run_cli({"spkl", "synth", path("s.spkl"), "--vocab", "150000", "--rows", "10000000000"}); });
    EXPECT_NE(m.find("more than the 1 TiB"), std::string::npos) << m;
    m = bad_input_message([&] { run_cli({"spkl", "synth", path("s.spkl"), "--vocab", "4294967296", "--rows", "1"}); });
    EXPECT_NE(m.find("does not fit"), std::string::npos) << m;
    EXPECT_FALSE(fs::exists(path("s.spkl")));
}

// NaN (or a negative, or infinity) as a threshold would never fire: refused as bad input.
TEST_F(SpklTest, ThresholdsMustBeFiniteAndNonNegative) {
    const std::string pa = write_spkl(path("a.spkl"), random_rows(11, 2, 8, 1.0f));
    for (const char* t : {"nan", "NaN", "-1", "inf", "1e999", "abc", "1e-3x"})
        EXPECT_THROW(run_cli({"spkl", "diff", pa, pa, "--max-mean-kld", t}), CLI::ParseError) << t;
}

// The failure line prints numbers that can be told apart, not "0.000000 exceeds 0.000000".
TEST_F(SpklTest, MaxMeanKldFailurePrintsMeaningfulNumbers) {
    const std::string pa = write_spkl(path("a.spkl"), {{0.0f, 0.0f}});
    const std::string pb = write_spkl(path("b.spkl"), {{0.0f, 0.001f}});
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run_cli({"spkl", "kld", pa, pb, "--max-mean-kld", "1e-9"}), 1);
    const std::string out = ::testing::internal::GetCapturedStdout();
    // KL of (1/2, 1/2) against softmax(0, 0.001) is about 1.25e-7.
    EXPECT_NE(out.find("exceeds --max-mean-kld 1.0000000000000001e-09"), std::string::npos) << out;
    EXPECT_NE(out.find("FAIL: mean KLD 1.2"), std::string::npos) << out;
    EXPECT_EQ(out.find("0.000000 exceeds"), std::string::npos) << out;
}

// Logits stream in chunks that ignore row boundaries: the bytes and the digest come out right.
TEST_F(SpklTest, LogitsStreamInChunksAcrossRows) {
    const Rows rows = random_rows(12, 5, 37, 1.0f);
    const std::string p = write_spkl(path("a.spkl"), rows, Dtype::f32, "t", {1, 2, 3, 4, 5}, {0, 1, 2, kNoTarget, 4});
    Reader r(p);
    std::vector<float> got(5 * 37);
    size_t at = 0;
    while (size_t n = r.read_logits(reinterpret_cast<uint8_t*>(got.data()) + at, 28)) at += n;  // 7 floats
    EXPECT_EQ(at, 5u * 37 * 4);
    EXPECT_TRUE(r.finish().ok());
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(std::memcmp(got.data() + 37 * i, rows[i].data(), 37 * 4), 0) << i;
    EXPECT_EQ(check_file(p, true).md5.size(), 32u);
    EXPECT_TRUE(check_file(p, false).digest_ok);
}

// A row too large for diff's whole-row buffers is refused up front (exit 2), not a bad_alloc.
TEST_F(SpklTest, DiffRefusesRowsBeyondItsBound) {
    Header h;
    h.vocab = 1u << 25;  // 128 MiB of f32 per row
    h.rows = 1;
    std::vector<uint8_t> b(64, 0);
    std::memcpy(b.data(), kMagic.data(), 8);
    b[8] = 1;
    std::memcpy(b.data() + 20, &h.vocab, 4);
    b[24] = 1;
    spit(path("big.spkl"), b);
    fs::resize_file(path("big.spkl"), h.file_size());  // sparse
    const std::string m = bad_input_message([&] { diff(path("big.spkl"), path("big.spkl"), DiffOptions{}); });
    EXPECT_TRUE(one_line_starting_with(m, path("big.spkl") + ": rows of 134217728 bytes")) << m;
}

// The llama-perplexity statistics, against closed forms worked out by hand for 2 rows x 3 vocab:
// A = (0,0,0) target 0, (0,1,0) target 1; B = (1,0,0), (0,0,0). With E = e:
// log p_A = (-ln 3, 1 - ln(2+E)), log p_B = (1 - ln(2+E), -ln 3): the same two values swapped, so
// PPL(A) = PPL(B), ratio 1, difference 0, correlation -1; top-1 agrees on row 0 only.
TEST_F(SpklTest, LlamaPerplexityStatisticsOnAHandWorkedCase) {
    const std::string pa = write_spkl(path("a.spkl"), {{0, 0, 0}, {0, 1, 0}}, Dtype::f32, "a", {}, {0, 1});
    const std::string pb = write_spkl(path("b.spkl"), {{1, 0, 0}, {0, 0, 0}}, Dtype::f32, "b", {}, {0, 1});
    const DiffResult r = diff(pa, pb, DiffOptions{});
    const double E = std::exp(1.0), u = -std::log(3.0), v = 1 - std::log(2 + E);
    const double tol = 1e-12;
    // Same top p: 1 of 2, uncertainty sqrt(p (1 - p) / (n - 1)) = 0.5.
    EXPECT_EQ(r.top1, 0.5);
    EXPECT_NEAR(r.top1_se, 0.5, tol);
    const double ppl = std::exp(-(u + v) / 2);
    EXPECT_NEAR(r.ppl_a, ppl, 1e-12 * ppl);
    EXPECT_NEAR(r.ppl_b, ppl, 1e-12 * ppl);
    EXPECT_NEAR(r.ppl_ratio, 1.0, tol);
    EXPECT_NEAR(r.ppl_diff, 0.0, tol);
    // se of each nll mean: |u - v| / 2; covariance of the means -(u - v)^2 / 4; so the
    // difference's error is sqrt(2 P^2 (u-v)^2/4 + 2 P^2 (u-v)^2/4) = P |u - v|.
    EXPECT_NEAR(r.ppl_diff_se, ppl * std::fabs(u - v), 1e-10);
    EXPECT_NEAR(r.logp_corr, -1.0, 1e-12);
    // KLD per row: row 0 ln(2+E) - ln 3 - 1/3; row 1 E/(2+E) - ln(2+E) + ln 3.
    const double k0 = std::log(2 + E) - std::log(3.0) - 1.0 / 3, k1 = E / (2 + E) - std::log(2 + E) + std::log(3.0);
    const double klo = std::min(k0, k1), khi = std::max(k0, k1);
    EXPECT_NEAR(r.kld.p001, klo + 0.001 * (khi - klo), 1e-12);
    EXPECT_NEAR(r.kld.p999, klo + 0.999 * (khi - klo), 1e-12);
    // Δp = p_B - p_A: +d on row 0, -d on row 1, d = E/(E+2) - 1/3; percentiles interpolate linearly.
    const double d = E / (E + 2) - 1.0 / 3;
    EXPECT_NEAR(r.dp.max, d, tol);
    EXPECT_NEAR(r.dp.min, -d, tol);
    EXPECT_NEAR(r.dp.p50, 0.0, tol);
    EXPECT_NEAR(r.dp.p75, 0.5 * d, tol);
    EXPECT_NEAR(r.dp.p25, -0.5 * d, tol);
    EXPECT_NEAR(r.dp.p001, -d + 0.002 * d, tol);
    EXPECT_NEAR(r.dp.p999, -d + 1.998 * d, tol);
    // In text and JSON.
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run_cli({"spkl", "diff", pa, pb, "--json", path("d.json")}), 0);
    const std::string out = ::testing::internal::GetCapturedStdout();
    for (const char* want : {"Same top p   : 50.000 ± 50.000 %", " 0.1%   KLD", "PPL(B)/PPL(A)     : 1", "PPL(B)-PPL(A)",
                             "Cor(ln p_A, ln p_B): -100.000000 %", "75.0%  Δp", " 0.1%  Δp"})
        EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
    const auto j = nlohmann::json::parse(std::ifstream(path("d.json")));
    EXPECT_NEAR(j["targets"]["logp_correlation"].get<double>(), -1.0, 1e-12);
    EXPECT_NEAR(j["targets"]["dp_percentiles"]["p75"].get<double>(), 0.5 * d, tol);
    EXPECT_NEAR(j["kld"]["p0.1"].get<double>(), klo + 0.001 * (khi - klo), 1e-12);
    EXPECT_NEAR(j["top1"]["fraction_se"].get<double>(), 0.5, tol);
}

// More rows than diff keeps per-row state for: one line naming the file, not a bad_alloc.
TEST_F(SpklTest, DiffRefusesMoreRowsThanItsBound) {
    Header h;
    h.dtype = Dtype::f16;
    h.vocab = 1;
    h.rows = kMaxDiffRows + 1;
    std::vector<uint8_t> b(64, 0);
    std::memcpy(b.data(), kMagic.data(), 8);
    b[8] = 1;
    b[12] = 1;
    b[20] = 1;
    std::memcpy(b.data() + 24, &h.rows, 8);
    spit(path("many.spkl"), b);
    fs::resize_file(path("many.spkl"), h.file_size());  // sparse
    const std::string m = bad_input_message([&] { diff(path("many.spkl"), path("many.spkl"), DiffOptions{}); });
    EXPECT_TRUE(one_line_starting_with(m, path("many.spkl") + ": 268435457 rows; diff keeps")) << m;
}

}  // namespace
