// .npy and raw tensor files: numpy's own files read right, ours laid out as numpy lays them out,
// and every malformation a one-line BadInput naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "errors.hpp"
#include "npy.hpp"

namespace fs = std::filesystem;
using bitgate::BadInput;
namespace npy = bitgate::npy;

namespace {

const fs::path kFixtures = fs::path(BITGATE_SOURCE_DIR) / "tests" / "npy_fixtures";

std::vector<uint8_t> le(std::initializer_list<uint32_t> words, int width) {
    std::vector<uint8_t> out;
    for (const uint32_t w : words)
        for (int i = 0; i < width; ++i) out.push_back(uint8_t(w >> (8 * i)));
    return out;
}

std::vector<uint8_t> file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, std::string_view bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// A scratch directory per test, removed afterwards.
class NpyFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("bitgate_npy_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    // A v1.0 file with the given header dict (padded as numpy pads it) and data.
    std::string npy_with(const std::string& name, const std::string& dict, std::string_view data) {
        std::string h = dict;
        while ((10 + h.size() + 1) % 64 != 0) h += ' ';
        h += '\n';
        std::string f = std::string("\x93NUMPY\x01\x00", 8);
        f += char(h.size() & 0xff);
        f += char(h.size() >> 8);
        f += h;
        f += data;
        put(path(name), f);
        return path(name);
    }

    // The message must name the file and say what is wrong.
    void expect_bad(const std::string& file, const std::string& what) {
        try {
            (void)npy::read(file);
            ADD_FAILURE() << file << ": read did not throw; expected: " << what;
        } catch (const BadInput& e) {
            const std::string msg = e.what();
            EXPECT_EQ(msg.rfind(file + ": ", 0), 0u) << msg;
            EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg << "\nexpected to contain: " << what;
            EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        }
    }

    fs::path dir_;
};

// ---- numpy's own files ---------------------------------------------------------------------------

TEST(NpyNumpyFiles, F4TwoByThree) {
    const auto t = npy::read((kFixtures / "f4_2x3.npy").string());
    EXPECT_EQ(t.dtype, "<f4");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
    // 1.0, -2.0, 0.5, +0, -0, +inf
    EXPECT_EQ(t.bytes, le({0x3f800000, 0xc0000000, 0x3f000000, 0x00000000, 0x80000000, 0x7f800000}, 4));
}

TEST(NpyNumpyFiles, VersionsTwoAndThreeHoldTheSameArray) {
    const auto v1 = npy::read((kFixtures / "f4_2x3.npy").string());
    for (const char* name : {"f4_v2.npy", "f4_v3.npy"}) {
        const auto t = npy::read((kFixtures / name).string());
        EXPECT_EQ(t.dtype, v1.dtype) << name;
        EXPECT_EQ(t.shape, v1.shape) << name;
        EXPECT_EQ(t.bytes, v1.bytes) << name;
    }
}

TEST(NpyNumpyFiles, EveryDtype) {
    struct Case {
        const char* file;
        const char* dtype;
        std::vector<int64_t> shape;
        std::vector<uint8_t> bytes;
    };
    const std::vector<Case> cases = {
        // 1, -2, 65504 (largest f16), 2^-24 (smallest subnormal), +0
        {"f2_5.npy", "<f2", {5}, le({0x3c00, 0xc000, 0x7bff, 0x0001, 0x0000}, 2)},
        {"u1_scalar.npy", "|u1", {}, {7}},
        {"i1_4.npy", "|i1", {4}, {0x80, 0xff, 0x00, 0x7f}},
        {"u2_3.npy", "<u2", {3}, le({0, 1, 0xffff}, 2)},
        {"u4_2.npy", "<u4", {2}, le({1, 0xdeadbeef}, 4)},
        {"i4_2x2x2.npy", "<i4", {2, 2, 2}, le({uint32_t(-4), uint32_t(-3), uint32_t(-2), uint32_t(-1), 0, 1, 2, 3}, 4)},
        {"f4_empty_0x3.npy", "<f4", {0, 3}, {}},
    };
    for (const auto& c : cases) {
        const auto t = npy::read((kFixtures / c.file).string());
        EXPECT_EQ(t.dtype, c.dtype) << c.file;
        EXPECT_EQ(t.shape, c.shape) << c.file;
        EXPECT_EQ(t.bytes, c.bytes) << c.file;
    }
}

// Our writer produces numpy's bytes exactly: header dict, spare growth spaces, 64-byte padding.
TEST_F(NpyFiles, WriterMatchesNumpyByteForByte) {
    struct Case {
        const char* fixture;
        std::vector<uint8_t> bytes;
        std::vector<int64_t> shape;
        const char* dtype;
    };
    const std::vector<Case> cases = {
        {"f4_2x3.npy", le({0x3f800000, 0xc0000000, 0x3f000000, 0, 0x80000000, 0x7f800000}, 4), {2, 3}, "<f4"},
        {"f2_5.npy", le({0x3c00, 0xc000, 0x7bff, 0x0001, 0}, 2), {5}, "<f2"},
        {"u1_scalar.npy", {7}, {}, "|u1"},
        {"i4_2x2x2.npy", le({uint32_t(-4), uint32_t(-3), uint32_t(-2), uint32_t(-1), 0, 1, 2, 3}, 4), {2, 2, 2}, "<i4"},
        {"f4_empty_0x3.npy", {}, {0, 3}, "<f4"},
    };
    for (const auto& c : cases) {
        const std::string out = path(c.fixture);
        npy::write(out, c.bytes, c.shape, c.dtype);
        EXPECT_EQ(file_bytes(out), file_bytes(kFixtures / c.fixture)) << c.fixture;
    }
}

// ---- round trips ---------------------------------------------------------------------------------

TEST_F(NpyFiles, RoundTripEveryDtypeAndRank) {
    const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
        {"<f4", {7}},     {"<f2", {3, 5}},        {"|u1", {}},    {"|i1", {2, 3, 4}},
        {"<u2", {1, 1, 1, 9}}, {"<u4", {0}},       {"<i4", {4, 0, 2}}, {"|u1", {34 * 3}},
    };
    for (const auto& [dtype, shape] : cases) {
        size_t n = 1;
        for (const auto d : shape) n *= size_t(d);
        std::vector<uint8_t> bytes(n * npy::itemsize(dtype));
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 37 + 11);
        const std::string f = path("rt.npy");
        npy::write(f, bytes, shape, dtype);
        const auto t = npy::read(f);
        EXPECT_EQ(t.dtype, dtype);
        EXPECT_EQ(t.shape, shape) << dtype;
        EXPECT_EQ(t.bytes, bytes) << dtype << " " << npy::shape_str(shape);
        EXPECT_EQ(fs::file_size(f) % 64, bytes.size() % 64) << "header not padded to 64 bytes";
    }
}

TEST_F(NpyFiles, WriteRejectsBytesThatDoNotFitTheShape) {
    const std::vector<uint8_t> six(6);
    EXPECT_THROW(npy::write(path("x.npy"), six, {2}, "<f4"), std::invalid_argument);
    EXPECT_THROW(npy::write(path("x.npy"), six, {6}, "<f8"), std::invalid_argument);
    EXPECT_THROW(npy::write((dir_ / "no" / "such" / "x.npy").string(), six, {6}, "|u1"), BadInput);
}

TEST(NpyNames, ShapeStringsAsNumpySpellsThem) {
    EXPECT_EQ(npy::shape_str({}), "()");
    EXPECT_EQ(npy::shape_str({5}), "(5,)");
    EXPECT_EQ(npy::shape_str({3, 4}), "(3, 4)");
}

// ---- malformations -------------------------------------------------------------------------------

TEST_F(NpyFiles, BadMagic) {
    put(path("a.npy"), std::string("\x93NUMPZ\x01\x00\x00\x00", 10));
    expect_bad(path("a.npy"), "bad magic");
    put(path("b.npy"), "");
    expect_bad(path("b.npy"), "bad magic");
}

TEST_F(NpyFiles, UnknownVersion) {
    put(path("a.npy"), std::string("\x93NUMPY\x04\x00\x00\x00", 10));
    expect_bad(path("a.npy"), "version 4.0 is not supported");
}

TEST_F(NpyFiles, TruncatedHeader) {
    put(path("a.npy"), std::string("\x93NUMPY\x01\x00\x76", 9));
    expect_bad(path("a.npy"), "truncated in the header length");
    put(path("b.npy"), std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 18));
    expect_bad(path("b.npy"), "truncated in the header (118 bytes announced, 8 present)");
}

// A v1 header length of 0 or 1 ends before the 12 bytes the reader takes first (a fuzzing find:
// the reader used to copy 12 bytes into the shorter header and read a wrapped-around length).
TEST_F(NpyFiles, HeaderShorterThanThePreambleRead) {
    for (const char len : {'\x00', '\x01'}) {
        const std::string f = std::string("\x93NUMPY\x01\x00", 8) + len + std::string("\x00", 1) + "{}" +
                              std::string(40, ' ') + "\n";
        put(path("s.npy"), f);
        // The header's own bytes are judged ("" and "{"), not a read past them.
        expect_bad(path("s.npy"), "bad .npy header: expected");
        EXPECT_THROW(npy::parse(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(f.data()), f.size()), "m.npy"),
                     BadInput);
    }
}

TEST_F(NpyFiles, BadHeaderDicts) {
    const std::string data(4, '\0');
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[1, 2]", "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'fortran_order': False, 'shape': (1,), }", "no 'descr' key"},
        {"{'descr': '<f4', 'shape': (1,), }", "no 'fortran_order' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unexpected key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "key 'descr' given twice"},
        {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", "must be True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}", "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "non-negative integer"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", "does not fit in 64 bits"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "text after the closing brace"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "expected ','"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", "expected ':'"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", "structured dtype"},
    };
    int i = 0;
    for (const auto& [dict, what] : cases) {
        const std::string f = npy_with(std::to_string(i++) + "h.npy", dict, data);
        expect_bad(f, what);
    }
    // The same header done right reads: the cases above fail for the reason named, not the helper.
    const auto t = npy::read(npy_with("ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", data));
    EXPECT_EQ(t.shape, (std::vector<int64_t>{1}));
}

TEST_F(NpyFiles, FortranOrderFromNumpy) {
    expect_bad((kFixtures / "f4_fortran.npy").string(), "Fortran-order array is not supported");
}

TEST_F(NpyFiles, BigEndianFromNumpy) {
    expect_bad((kFixtures / "f4_bigendian.npy").string(), "big-endian dtype '>f4' is not supported");
}

TEST_F(NpyFiles, UnsupportedDtypeFromNumpy) {
    expect_bad((kFixtures / "f8_2.npy").string(), "unsupported dtype '<f8'");
}

TEST_F(NpyFiles, TruncatedAndOverlongData) {
    const auto whole = file_bytes(kFixtures / "f4_2x3.npy");
    put(path("short.npy"), std::string(whole.begin(), whole.end() - 1));
    expect_bad(path("short.npy"), "truncated: shape (2, 3) of <f4 needs 24 data bytes, the file has 23");
    put(path("long.npy"), std::string(whole.begin(), whole.end()) + "x");
    expect_bad(path("long.npy"), "1 bytes after the data");
}

TEST_F(NpyFiles, MissingFile) { expect_bad(path("absent.npy"), "cannot open"); }

// ---- tensors for a spec --------------------------------------------------------------------------

TEST_F(NpyFiles, ReadForChecksDtypeAndSize) {
    const std::string f4 = (kFixtures / "f4_2x3.npy").string();
    EXPECT_EQ(npy::read_for(f4, bitgate::Elem::f32, 24).bytes.size(), 24u);
    try {
        (void)npy::read_for(f4, bitgate::Elem::f16, 12);
        ADD_FAILURE() << "an f32 file was accepted for an f16 tensor";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), f4 + ": dtype <f4, the tensor needs <f2");
    }
    try {
        (void)npy::read_for(f4, bitgate::Elem::f32, 28);
        ADD_FAILURE() << "a 24-byte tensor was accepted for 28 bytes";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), f4 + ": shape (2, 3) of <f4 holds 24 bytes, the tensor needs 28");
    }
    // Q8_0 blocks travel as their bytes.
    const std::vector<uint8_t> blocks(34 * 2, 0x5a);
    npy::write(path("q.npy"), blocks, {2, 34}, "|u1");
    EXPECT_EQ(npy::read_for(path("q.npy"), bitgate::Elem::q8_0, 68).bytes, blocks);
}

TEST_F(NpyFiles, RawFiles) {
    put(path("x.bin"), std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
    const auto t = npy::read_for(path("x.bin"), bitgate::Elem::u16, 8);
    EXPECT_EQ(t.bytes, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(t.shape, (std::vector<int64_t>{4}));
    EXPECT_EQ(t.dtype, "<u2");
    try {
        (void)npy::read_raw(path("x.bin"), 12);
        ADD_FAILURE() << "an 8-byte raw file was accepted for 12 bytes";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), path("x.bin") + ": raw tensor file has 8 bytes, the tensor needs 12");
    }
    EXPECT_THROW((void)npy::read_raw(path("absent.bin"), 8), BadInput);
}

// ---- numpy itself, where it is importable ----------------------------------------------------------

TEST_F(NpyFiles, NumpyReadsOursAndWeReadNumpys) {
    if (std::system("python3 -c 'import numpy' >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "python3 with numpy is not importable here; the checked-in numpy files still cover the reader";
    // Ours -> numpy: float bit patterns numpy must see unchanged.
    const auto ours = le({0x3f800000, 0x80000000, 0x00000001, 0x7f7fffff, 0xff800000, 0x40490fdb}, 4);
    npy::write(path("ours.npy"), ours, {3, 2}, "<f4");
    // numpy -> ours: a 3-D uint16 array whose values the test states independently.
    const std::string script =
        "import numpy as np, sys\n"
        "a = np.load(sys.argv[1])\n"
        "print(a.dtype.str, a.shape, a.tobytes().hex())\n"
        "np.save(sys.argv[2], (np.arange(24, dtype='<u2') * 1000).reshape(2, 3, 4))\n";
    put(path("t.py"), script);
    const std::string cmd = "python3 " + path("t.py") + " " + path("ours.npy") + " " + path("theirs.npy") + " > " + path("out.txt");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto out = file_bytes(path("out.txt"));
    EXPECT_EQ(std::string(out.begin(), out.end()), "<f4 (3, 2) 0000803f0000008001000000ffff7f7f000080ffdb0f4940\n");

    const auto t = npy::read(path("theirs.npy"));
    EXPECT_EQ(t.dtype, "<u2");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3, 4}));
    ASSERT_EQ(t.bytes.size(), 48u);
    for (int i = 0; i < 24; ++i) EXPECT_EQ(t.bytes[2 * i] | (t.bytes[2 * i + 1] << 8), i * 1000) << i;
}

// ---- one reader for everything: the dtypes both old readers knew, and what neither should take ---

TEST_F(NpyFiles, EightByteIntegersRoundTrip) {
    const std::vector<uint8_t> b = le({1, 0, 0xffffffffu, 0xffffffffu}, 4);  // int64 1, -1
    npy::write(path("i8.npy"), b, {2}, "<i8");
    const auto t = npy::read(path("i8.npy"));
    EXPECT_EQ(t.dtype, "<i8");
    EXPECT_EQ(t.bytes, b);
    EXPECT_EQ(npy::read_ids(path("i8.npy"), 2, true), (std::vector<uint32_t>{1, npy::kNoId}));
    try {
        (void)npy::read_ids(path("i8.npy"), 2, false);
        ADD_FAILURE() << "-1 accepted as a token id";
    } catch (const BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("id at index 1 is out of range (-1)"), std::string::npos) << e.what();
    }
}

TEST_F(NpyFiles, DuplicateShapeIsRejectedNotLastWins) {
    expect_bad(npy_with("d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (1,), }", std::string(4, '\0')),
               "key 'shape' given twice");
}

TEST_F(NpyFiles, NotARegularFile) {
    expect_bad("/dev/zero", "not a regular file");
    try {
        (void)npy::read_raw("/dev/zero", 16);
        ADD_FAILURE() << "/dev/zero read as a raw tensor";
    } catch (const BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
}

TEST_F(NpyFiles, HugeHeaderLengthIsRefusedBeforeReading) {
    std::string f = std::string("\x93NUMPY\x02\x00", 8) + std::string("\x00\x00\x10\x00", 4);  // 1 MiB + ...
    f[10] = 0x20;  // 0x00200000 = 2 MiB announced
    f += std::string(size_t{2} << 20, ' ');
    put(path("h.npy"), f);
    expect_bad(path("h.npy"), "larger than the 1 MiB accepted");
}

TEST_F(NpyFiles, InMemoryParseAgreesWithTheFileReader) {
    const auto whole = file_bytes(kFixtures / "f4_2x3.npy");
    const auto h = npy::parse(whole, "mem.npy");
    EXPECT_EQ(h.dtype, "<f4");
    EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(h.data_bytes, 24u);
    EXPECT_EQ(h.data_offset + 24, whole.size());
    EXPECT_THROW(npy::parse(std::span<const uint8_t>(whole.data(), whole.size() - 1), "mem.npy"), BadInput);
}

// A failed write keeps what the target was; a finished one replaces it.
TEST_F(NpyFiles, WriterReplacesOnlyWhenComplete) {
    put(path("o.npy"), "old");
    {
        npy::Writer w(path("o.npy"), {4}, "<f4");
        const float x[2] = {1, 2};
        w.write(x, sizeof x);
    }  // abandoned
    EXPECT_EQ(file_bytes(path("o.npy")), (std::vector<uint8_t>{'o', 'l', 'd'}));
    const std::vector<uint8_t> b(16, 0);
    npy::write(path("o.npy"), b, {4}, "<f4");
    EXPECT_EQ(npy::read(path("o.npy")).bytes, b);
    size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(path(""))) ++entries;
    EXPECT_EQ(entries, 1u);
}

}  // namespace
