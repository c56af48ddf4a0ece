// Size limits and file checks: impossible shapes and unreadable inputs are bad input (exit 2,
// one line naming the flag or the file and line), never an overflow, a crash or a bad_alloc.
// The reproducers are those a fuzzing campaign found against the unbounded engine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "cli.hpp"
#include "errors.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;

namespace {

struct CliResult {
    int rc;
    std::string out, err;
};

CliResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), "bitgate");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int rc = bitgate::cli_main(int(argv.size()), argv.data());
    std::string out = ::testing::internal::GetCapturedStdout();
    return {rc, out, ::testing::internal::GetCapturedStderr()};
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

class LimitsFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("bitgate_limits_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string put(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name, std::ios::binary) << text;
        return (dir_ / name).string();
    }
    fs::path dir_;
};

}  // namespace

TEST(Limits, HugeDimensionsAreBadInputNamingTheFlag) {
    // 2^62: the byte count n * k * 4 overflowed and the model wrote past its buffer.
    for (const char* shape : {"n=1 k=4611686018427387904", "n=1 k=2147483648", "n=4294967296 k=4"}) {
        const CliResult r = cli({"run", "--family", "proj_f32", "--variant", "v1", "--shape", shape, "--out", "."});
        EXPECT_EQ(r.rc, bitgate::exit_bad_input) << shape << ": " << r.err;
        EXPECT_TRUE(one_line(r.err)) << r.err;
        EXPECT_NE(r.err.find("--shape: impossible shape"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("is above its limit 2147483647"), std::string::npos) << r.err;
    }
}

TEST(Limits, EveryDimensionIsBoundedInEveryFamily) {
    // 2^31 in any one dimension, the others at their smallest, is rejected before family code runs.
    for (const bitgate::FamilySpec* f : bitgate::families()) {
        for (size_t i = 0; i < f->dims.size(); ++i) {
            std::vector<std::string> tokens;
            for (size_t j = 0; j < f->dims.size(); ++j)
                tokens.push_back(f->dims[j].name + "=" + (i == j ? "2147483648" : std::to_string(f->dims[j].lo)));
            try {
                bitgate::parse_shape(*f, tokens, "here");
                ADD_FAILURE() << f->name << " accepted " << f->dims[i].name << "=2^31";
            } catch (const bitgate::BadInput& e) {
                EXPECT_NE(std::string(e.what()).find(f->dims[i].name + "=2147483648 is above its limit"), std::string::npos)
                    << e.what();
            }
        }
    }
}

TEST(Limits, ValidButHugeCasesHitTheByteLimit) {
    // 4e5 x 1e6 floats: every dimension is in range, the buffers are 1.6 TB.
    const CliResult r = cli({"run", "--family", "proj_f32", "--variant", "v1", "--shape", "n=400000 k=1000000"});
    EXPECT_EQ(r.rc, bitgate::exit_bad_input) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    // y (n floats) + x (k floats) + w (n k floats), computed here by hand.
    const uint64_t bytes = 400000ull * 4 + 1000000ull * 4 + 400000ull * 1000000ull * 4;
    EXPECT_NE(r.err.find("its buffers take " + std::to_string(bytes) + " bytes"), std::string::npos) << r.err;
}

TEST(Limits, TheByteLimitCanBeSetAndIsCheckedItself) {
    const auto& f = bitgate::family("proj_f32");
    ::setenv("BITGATE_MAX_CASE_BYTES", "1000", 1);
    // n=10 k=16: x 64 + w 640 + y 40 = 744 bytes fits; n=12: 64 + 768 + 48 = 880 fits; n=16: 1152 does not.
    EXPECT_EQ(bitgate::shape_problem(f, nullptr, bitgate::parse_shape(f, {"n=12", "k=16"}, "t")), "");
    EXPECT_THROW(bitgate::parse_shape(f, {"n=16", "k=16"}, "t"), bitgate::BadInput);
    ::setenv("BITGATE_MAX_CASE_BYTES", "12x", 1);
    EXPECT_THROW(bitgate::parse_shape(f, {"n=1", "k=16"}, "t"), bitgate::BadInput);
    ::unsetenv("BITGATE_MAX_CASE_BYTES");
    EXPECT_NO_THROW(bitgate::parse_shape(f, {"n=16", "k=16"}, "t"));
}

TEST_F(LimitsFiles, CatalogLinesWithHugeDimensionsNameFileAndLine) {
    const auto& f = bitgate::family("proj_f32");
    for (const char* line : {"n=1025 k=4611686018427387904", "n=4294967296 k=4", "n=1 k=2147483648"}) {
        const std::string path = put("proj_f32.shapes", std::string("# a comment\nn=4 k=8\n") + line + "\n");
        try {
            bitgate::read_family_catalog(f, path);
            ADD_FAILURE() << "accepted " << line;
        } catch (const bitgate::BadInput& e) {
            EXPECT_EQ(std::string(e.what()).rfind(path + ":3: impossible shape", 0), 0u) << e.what();
        }
    }
}

TEST_F(LimitsFiles, InputsMustBeRegularFiles) {
    const std::string base = "--shape=n=3 k=8";
    for (const std::string& bad : {dir_.string(), std::string("/dev/zero")}) {
        const CliResult r = cli({"run", "--family", "proj_f32", "--variant", "v1", base, "--input", "x=" + bad,
                                 "--out", dir_.string()});
        EXPECT_EQ(r.rc, bitgate::exit_bad_input) << r.err;
        EXPECT_TRUE(one_line(r.err)) << r.err;
        EXPECT_NE(r.err.find(bad + ": input x is not a regular file"), std::string::npos) << r.err;
    }
    // A regular file far larger than the input can be is refused before it is read.
    const std::string big = put("big.npy", std::string(3 << 20, 'x'));
    const CliResult r = cli({"run", "--family", "proj_f32", "--variant", "v1", base, "--input", "x=" + big});
    EXPECT_EQ(r.rc, bitgate::exit_bad_input) << r.err;
    EXPECT_NE(r.err.find(big + ": input x is 3145728 bytes, more than the"), std::string::npos) << r.err;
}

TEST_F(LimitsFiles, UnknownProfileIsBadInput) {
    const CliResult r = cli({"run", "--family", "proj_f32", "--variant", "v1", "--shape", "n=3 k=8", "--profile",
                             "bogus\nsecond line", "--out", dir_.string()});
    EXPECT_EQ(r.rc, bitgate::exit_bad_input) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("--profile bogus\\nsecond line: unknown profile for proj_f32"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "y.npy"));
}

TEST_F(LimitsFiles, OutIsCreatedAndSavedInputsReproduceTheRun) {
    const std::string out = (dir_ / "a" / "b").string(), again = (dir_ / "c").string();
    const CliResult r = cli({"run", "--family", "quantize_q8_0", "--variant", "v1", "--shape", "k=96", "--out", out,
                             "--save-inputs"});
    ASSERT_EQ(r.rc, 0) << r.err;
    ASSERT_TRUE(fs::exists(fs::path(out) / "x.npy"));
    // The .npy header names the real shape: x is one row of k floats, y is k/32 blocks of 34 bytes.
    auto header = [](const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        std::string h(128, '\0');
        in.read(h.data(), 128);
        return h;
    };
    EXPECT_NE(header(fs::path(out) / "x.npy").find("'descr': '<f4', 'fortran_order': False, 'shape': (96,)"), std::string::npos);
    EXPECT_NE(header(fs::path(out) / "y.npy").find("'descr': '|u1', 'fortran_order': False, 'shape': (3, 34)"), std::string::npos);
    // Feeding the saved input back gives the same output bytes.
    const CliResult r2 = cli({"run", "--family", "quantize_q8_0", "--variant", "v1", "--shape", "k=96", "--out", again,
                              "--input", "x=" + out + "/x.npy", "--seed", "7"});
    ASSERT_EQ(r2.rc, 0) << r2.err;
    auto digest_of_y = [](const std::string& text) {
        const auto at = text.find("output y");
        return at == std::string::npos ? std::string() : text.substr(text.find("xxh3-128", at));
    };
    EXPECT_FALSE(digest_of_y(r.out).empty()) << r.out;
    EXPECT_EQ(digest_of_y(r.out), digest_of_y(r2.out)) << r.out << r2.out;
    // --out naming a file is bad input.
    const std::string file = put("plain", "x");
    const CliResult r3 = cli({"run", "--family", "quantize_q8_0", "--variant", "v1", "--shape", "k=96", "--out", file});
    EXPECT_EQ(r3.rc, bitgate::exit_bad_input);
    EXPECT_NE(r3.err.find("not a directory"), std::string::npos) << r3.err;
}

TEST(Printable, EscapesControlAndInvalidBytesKeepsUtf8) {
    EXPECT_EQ(bitgate::printable("plain text: k=32"), "plain text: k=32");
    EXPECT_EQ(bitgate::printable("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(bitgate::printable(std::string("\x00\x1b\x7f", 3)), "\\x00\\x1b\\x7f");
    EXPECT_EQ(bitgate::printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    // Invalid: lone continuation, truncated sequence, overlong '/', a surrogate, above U+10FFFF.
    EXPECT_EQ(bitgate::printable("\x80"), "\\x80");
    EXPECT_EQ(bitgate::printable("\xe2\x82"), "\\xe2\\x82");
    EXPECT_EQ(bitgate::printable("\xc0\xaf"), "\\xc0\\xaf");
    EXPECT_EQ(bitgate::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");
    EXPECT_EQ(bitgate::printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
    EXPECT_EQ(bitgate::printable("\xff\xfe"), "\\xff\\xfe");
}

TEST_F(LimitsFiles, ErrorsEchoingFileBytesStayOneLine) {
    // A catalog whose bad token holds a carriage return and an escape: the CLI prints one line.
    fs::create_directories(dir_ / "shapes");
    fs::create_directories(dir_ / "golden");
    std::ofstream(dir_ / "shapes" / "quantize_q8_0.shapes") << "k=32 seeds=1\r\x1b[2J\n";
    const CliResult r = cli({"check", "--host-only", "--family", "quantize_q8_0", "--root", dir_.string()});
    EXPECT_EQ(r.rc, bitgate::exit_bad_input) << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("\\x1b"), std::string::npos) << r.err;
}
