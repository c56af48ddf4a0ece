// llama.cpp KLD files (`llama-perplexity --kl-divergence-base`): files made here from the format's
// definition (not by our writer) read right, a round trip keeps the log-probabilities to within
// the format's 16-bit step, and a file cut short is a one-line error naming it.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli.hpp"
#include "errors.hpp"
#include "llama_kld.hpp"
#include "npy.hpp"
#include "spkl.hpp"
#include "spkl_diff.hpp"

namespace {

using namespace bitgate;
using namespace bitgate::spkl;
namespace fs = std::filesystem;

class LlamaKld : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("bitgate_llama_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& n) const { return (dir_ / n).string(); }
    fs::path dir_;
};

std::vector<uint8_t> slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void spit(const std::string& p, const std::vector<uint8_t>& b) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}
template <class T>
void append(std::vector<uint8_t>& b, T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);  // little-endian host
    b.insert(b.end(), p, p + sizeof v);
}

// The format as llama-perplexity writes it: "_logits_", int32 n_ctx, n_vocab, n_chunk, int32
// tokens[n_chunk * n_ctx], then per chunk n_ctx - 1 - n_ctx/2 records of float scale, float min,
// n_vocab uint16 and one uint16 of padding when n_vocab is odd.
struct Generated {
    int32_t n_ctx, n_vocab, n_chunk;
    std::vector<int32_t> tokens;
    std::vector<float> scale, min;
    std::vector<std::vector<uint16_t>> q;
    std::vector<uint8_t> bytes() const {
        std::vector<uint8_t> b = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
        append(b, n_ctx);
        append(b, n_vocab);
        append(b, n_chunk);
        for (int32_t t : tokens) append(b, t);
        for (size_t r = 0; r < q.size(); ++r) {
            append(b, scale[r]);
            append(b, min[r]);
            for (uint16_t v : q[r]) append(b, v);
            if (n_vocab % 2) append(b, uint16_t(0));
        }
        return b;
    }
};

Generated small() {
    Generated g{6, 5, 2, {}, {}, {}, {}};  // rows per chunk: 6 - 1 - 3 = 2
    g.tokens = {0, 1, 2, 3, 4, 0, 4, 3, 2, 1, 0, 4};
    for (int r = 0; r < 4; ++r) {
        g.scale.push_back(0.25f);
        g.min.push_back(-4.0f - float(r));
        g.q.push_back({uint16_t(r), 16, 0, 65535, uint16_t(100 + r)});
    }
    return g;
}

int run_cli(std::vector<std::string> args) {
    CLI::App app{"bitgate"};
    int rc = -1;
    add_spkl_verbs(app, rc);
    std::vector<const char*> argv = {"bitgate"};
    for (const auto& s : args) argv.push_back(s.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return rc;
}

std::string bad_input_message(const std::function<void()>& f) {
    try {
        f();
    } catch (const BadInput& e) {
        return e.what();
    }
    return "(no BadInput thrown)";
}

TEST_F(LlamaKld, ReadsAFileMadeFromTheFormatDefinition) {
    const Generated g = small();
    spit(path("base.kld"), g.bytes());
    EXPECT_TRUE(llama::is_kld_file(path("base.kld")));
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run_cli({"spkl", "from-llama-kld", path("base.kld"), path("b.spkl"), "--tokens", path("all.npy")}), 0);
    ::testing::internal::GetCapturedStdout();
    Reader r(path("b.spkl"));
    ASSERT_EQ(r.header().rows, 4u);
    ASSERT_EQ(r.header().vocab, 5u);
    // Chunk c, position p (3 and 4) -> token tokens[6c + p], target tokens[6c + p + 1].
    EXPECT_EQ(r.token_ids(), (std::vector<uint32_t>{3, 4, 1, 0}));
    EXPECT_EQ(r.target_ids(), (std::vector<uint32_t>{4, 0, 0, 4}));
    std::vector<float> got(20);
    ASSERT_EQ(r.read_rows(got.data(), 4), 4u);
    EXPECT_TRUE(r.finish().ok());
    for (int row = 0; row < 4; ++row)
        for (int i = 0; i < 5; ++i)  // 0.25 q + min is exact in float for these values
            EXPECT_EQ(got[5 * row + i], 0.25f * float(g.q[row][i]) + g.min[row]) << row << " " << i;
    const auto all = npy::read_ids(path("all.npy"), 12, false);
    for (size_t i = 0; i < 12; ++i) EXPECT_EQ(all[i], uint32_t(g.tokens[i]));
}

TEST_F(LlamaKld, DiffTakesTheFileDirectly) {
    spit(path("base.kld"), small().bytes());
    ::testing::internal::CaptureStdout();
    run_cli({"spkl", "from-llama-kld", path("base.kld"), path("b.spkl")});
    ::testing::internal::GetCapturedStdout();
    const DiffResult d = diff(path("base.kld"), path("b.spkl"), DiffOptions{});
    EXPECT_EQ(d.path_a, path("base.kld"));
    EXPECT_TRUE(d.logits_identical);
    EXPECT_EQ(d.kld_mean, 0.0);
    EXPECT_EQ(d.target_rows, 4u);
}

TEST_F(LlamaKld, CutShortIsOneLineNamingTheFile) {
    const auto b = small().bytes();
    for (size_t keep : {size_t(3), size_t(19), size_t(40), b.size() - 1}) {
        spit(path("cut.kld"), std::vector<uint8_t>(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(keep)));
        const std::string m = bad_input_message([&] { run_cli({"spkl", "from-llama-kld", path("cut.kld"), path("o.spkl")}); });
        EXPECT_EQ(m.rfind(path("cut.kld") + ": ", 0), 0u) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_NE(m.find(keep < 8 ? "" : "truncated"), std::string::npos) << m;
        EXPECT_FALSE(fs::exists(path("o.spkl")));
    }
    Generated g = small();
    g.tokens[5] = 5;  // outside the vocabulary of 5
    spit(path("tok.kld"), g.bytes());
    const std::string m = bad_input_message([&] { run_cli({"spkl", "from-llama-kld", path("tok.kld"), path("o.spkl")}); });
    EXPECT_EQ(m.rfind(path("tok.kld") + ": token 5 at index 5", 0), 0u) << m;
}

// A file of no scored rows (n_ctx 2) is 28 bytes whatever n_vocab says; a row of n_vocab f32 must
// not be allocated for it (8 GiB at 2^31 - 1). The bound is to-llama-kld's: 16M tokens a row.
TEST_F(LlamaKld, HugeVocabularyIsRefusedBeforeAllocating) {
    Generated g{2, INT32_MAX, 1, {0, 1}, {}, {}, {}};
    spit(path("wide.kld"), g.bytes());
    const std::string m = bad_input_message([&] { run_cli({"spkl", "from-llama-kld", path("wide.kld"), path("o.spkl")}); });
    EXPECT_EQ(m, path("wide.kld") + ": n_vocab 2147483647: rows of more than 64 MiB are not converted");
    EXPECT_FALSE(fs::exists(path("o.spkl")));
    // 16M tokens is the largest row taken: with no rows, it converts to an empty .spkl.
    g.n_vocab = 16 << 20;
    spit(path("edge.kld"), g.bytes());
    EXPECT_EQ(run_cli({"spkl", "from-llama-kld", path("edge.kld"), path("o.spkl")}), 0);
    EXPECT_TRUE(fs::exists(path("o.spkl")));
    g.n_vocab = (16 << 20) + 1;
    spit(path("over.kld"), g.bytes());
    EXPECT_NE(bad_input_message([&] { run_cli({"spkl", "from-llama-kld", path("over.kld"), path("p.spkl")}); })
                  .find("rows of more than 64 MiB"),
              std::string::npos);
}

// .spkl -> KLD -> .spkl: each log-probability within the run's quantization step (range / 65535,
// the range at most 16), tokens and targets kept; the written file parsed here by the definition.
TEST_F(LlamaKld, RoundTripKeepsLogProbsToTheStep) {
    const int32_t n_ctx = 8, n_chunk = 3, vocab = 9;  // 3 scored rows per chunk
    const int rows = n_chunk * (n_ctx - 1 - n_ctx / 2);
    std::mt19937 gen(5);
    std::uniform_int_distribution<uint32_t> tok(0, vocab - 1);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    std::vector<uint32_t> stream(size_t(n_chunk) * n_ctx), row_tok, row_tgt;
    for (auto& t : stream) t = tok(gen);
    for (int c = 0; c < n_chunk; ++c)
        for (int p = n_ctx / 2; p < n_ctx - 1; ++p) {
            row_tok.push_back(stream[size_t(c) * n_ctx + p]);
            row_tgt.push_back(stream[size_t(c) * n_ctx + p + 1]);
        }
    std::vector<std::vector<float>> x(rows, std::vector<float>(vocab));
    for (auto& r : x)
        for (float& v : r) v = nd(gen);
    x[1][2] = x[1][0] - 30.0f;  // far below the maximum: clamped to the floor
    Header h;
    h.vocab = vocab;
    h.rows = uint64_t(rows);
    {
        Writer w(path("a.spkl"), h, row_tok, row_tgt);
        for (const auto& r : x) w.write_row(r.data());
        w.finish();
    }
    npy::write_ids(path("all.npy"), stream, false);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(run_cli({"spkl", "to-llama-kld", path("a.spkl"), path("a.kld"), "--n-ctx", "8", "--tokens", path("all.npy")}), 0);
    EXPECT_EQ(run_cli({"spkl", "from-llama-kld", path("a.kld"), path("b.spkl")}), 0);
    ::testing::internal::GetCapturedStdout();

    const auto k = slurp(path("a.kld"));
    const size_t rec = 4 + 2 * ((vocab + 1) / 2);
    ASSERT_EQ(k.size(), 20 + 4 * stream.size() + 2 * rec * rows);
    int32_t hdr[3];
    std::memcpy(hdr, k.data() + 8, 12);
    EXPECT_EQ(hdr[0], n_ctx);
    EXPECT_EQ(hdr[1], vocab);
    EXPECT_EQ(hdr[2], n_chunk);
    for (size_t i = 0; i < stream.size(); ++i) {
        int32_t t;
        std::memcpy(&t, k.data() + 20 + 4 * i, 4);
        EXPECT_EQ(uint32_t(t), stream[i]);
    }
    Reader r(path("b.spkl"));
    EXPECT_EQ(r.token_ids(), row_tok);
    EXPECT_EQ(r.target_ids(), row_tgt);
    std::vector<float> got(size_t(rows) * vocab);
    r.read_rows(got.data(), size_t(rows));
    for (int row = 0; row < rows; ++row) {
        // Reference log-softmax in long double with libm.
        long double m = -INFINITY, s = 0;
        for (float v : x[row]) m = std::max(m, (long double)v);
        for (float v : x[row]) s += std::exp((long double)v - m);
        float lo = x[row][0];
        for (float v : x[row]) lo = std::min(lo, v);
        const long double floor = std::max((long double)lo, m - 16) - m - std::log(s);
        const double step = double(m - std::max((long double)lo, m - 16)) / 65535.0;
        for (int i = 0; i < vocab; ++i) {
            const long double want = std::max((long double)x[row][i] - m - std::log(s), floor);
            EXPECT_NEAR(double(got[size_t(row) * vocab + i]), double(want), step / 2 + 1e-5) << row << " " << i;
        }
    }
    // Rows that do not fit the stream are refused, naming the .spkl.
    npy::write_ids(path("short.npy"), std::vector<uint32_t>(stream.begin(), stream.begin() + 16), false);
    const std::string m = bad_input_message(
        [&] { run_cli({"spkl", "to-llama-kld", path("a.spkl"), path("o.kld"), "--n-ctx", "8", "--tokens", path("short.npy")}); });
    EXPECT_EQ(m.rfind(path("a.spkl") + ": 9 rows, but 2 chunks", 0), 0u) << m;
}

}  // namespace
