// The GGUF container: the writer's bytes against a file laid out by hand from the format's
// description, every value type through a write and a parse, and bad images (magic, version,
// every truncation, counts larger than the file, offsets outside it, overlaps) refused with
// one-line BadInput naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "model/gguf.hpp"

namespace bitgate::gguf {
namespace {

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("bitgate_gguf_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

// Little-endian byte builder for hand-made images.
struct Bytes {
    std::vector<uint8_t> b;
    Bytes& u(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return *this;
    }
    Bytes& s(const std::string& x) {
        u(x.size(), 8);
        b.insert(b.end(), x.begin(), x.end());
        return *this;
    }
    Bytes& raw(const std::string& x) { b.insert(b.end(), x.begin(), x.end()); return *this; }
    Bytes& pad(size_t al) { while (b.size() % al) b.push_back(0); return *this; }
};

// Expect BadInput whose message starts with the path, is one line and contains `what`.
template <class F>
void expect_bad(F&& f, const std::string& path, const std::string& what) {
    try {
        f();
        ADD_FAILURE() << "no BadInput; wanted: " << what;
    } catch (const BadInput& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind(path + ": ", 0), 0u) << m;
        EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        EXPECT_NE(m.find(what), std::string::npos) << "message: " << m << "\nwanted: " << what;
    }
}

// A small image: two metadata keys and two F32 tensors, made by hand.
Bytes hand_image() {
    Bytes x;
    x.u(0x46554747, 4).u(3, 4).u(2, 8).u(2, 8);              // magic, version, tensors, kvs
    x.s("general.architecture").u(8, 4).s("test");            // string
    x.s("test.count").u(4, 4).u(7, 4);                        // uint32 7
    x.s("a").u(1, 4).u(4, 8).u(0, 4).u(0, 8);                 // F32 {4} at 0
    x.s("b").u(2, 4).u(2, 8).u(3, 8).u(0, 4).u(32, 8);        // F32 {2, 3} at 32
    x.pad(32);
    for (int i = 0; i < 4; ++i) x.u(0x3f800000u + i, 4);      // a: 16 bytes
    x.pad(32);
    for (int i = 0; i < 6; ++i) x.u(0x40000000u + i, 4);      // b: 24 bytes
    x.pad(32);
    return x;
}

TEST(Gguf, WriterMatchesHandLayout) {
    const std::string p = temp_path("hand.gguf");
    const std::vector<KV> kv = {{"general.architecture", Value::str_("test")}, {"test.count", Value::u32(7)}};
    const std::vector<TensorOut> ts = {{"a", {4}, t_f32}, {"b", {2, 3}, t_f32}};
    const Bytes want = hand_image();
    // The writer gets the tensor bytes from the hand image's data section.
    const size_t data = want.b.size() - 64;
    write(p, kv, ts, [&](size_t i, std::span<uint8_t> out) {
        ASSERT_EQ(out.size(), i == 0 ? 16u : 24u);
        std::memcpy(out.data(), want.b.data() + data + 32 * i, out.size());
    });
    EXPECT_EQ(slurp(p), want.b);
    std::filesystem::remove(p);
}

TEST(Gguf, ParsesHandImage) {
    const Bytes x = hand_image();
    const File f = parse(x.b, "hand.gguf");
    EXPECT_EQ(f.version, 3u);
    EXPECT_EQ(f.alignment, 32u);
    ASSERT_EQ(f.kv.size(), 2u);
    EXPECT_EQ(f.find("general.architecture")->s, "test");
    EXPECT_EQ(f.find("test.count")->raw, 7u);
    ASSERT_EQ(f.tensors.size(), 2u);
    EXPECT_EQ(f.tensors[1].name, "b");
    EXPECT_EQ(f.tensors[1].ne, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(f.tensors[1].size, 24u);
    EXPECT_EQ(f.data_offset, x.b.size() - 64);
    uint32_t first;
    std::memcpy(&first, f.tensors[1].bytes.data(), 4);
    EXPECT_EQ(first, 0x40000000u);
}

TEST(Gguf, EveryValueTypeRoundTrips) {
    const std::string p = temp_path("values.gguf");
    std::vector<KV> kv = {
        {"u8", Value::u8(250)}, {"i8", Value::i8(-5)}, {"u16", Value::u16(65000)}, {"i16", Value::i16(-30000)},
        {"u32", Value::u32(4000000000u)}, {"i32", Value::i32(-2000000000)}, {"u64", Value::u64(~0ull)},
        {"i64", Value::i64(INT64_MIN)}, {"f32", Value::f32(-1.5f)}, {"f64", Value::f64(1e300)},
        {"bool", Value::boolean(true)}, {"str", Value::str_(std::string("h\0llo \xc4\xa0", 8))},
        {"arr_i16", Value::array(VType::i16, {Value::i16(-1), Value::i16(2)})},
        {"arr_str", Value::array(VType::str, {Value::str_(""), Value::str_("x y")})},
        {"arr_arr_str", Value::array(VType::arr, {Value::array(VType::str, {Value::str_("a")}),
                                                   Value::array(VType::str, {})})},
        {"arr_empty_f64", Value::array(VType::f64, {})},
        {"general.alignment", Value::u32(64)},
    };
    write(p, kv, {{"t", {32, 2}, t_q8_0}}, [](size_t, std::span<uint8_t> out) {
        for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i);
    }, 64);
    const std::vector<uint8_t> img = slurp(p);
    const File f = parse(img, p);
    EXPECT_EQ(f.alignment, 64u);
    EXPECT_EQ(f.data_offset % 64, 0u);
    ASSERT_EQ(f.kv.size(), kv.size());
    std::function<void(const Value&, const Value&)> same = [&](const Value& a, const Value& b) {
        ASSERT_EQ(a.type, b.type);
        EXPECT_EQ(a.raw, b.raw);
        EXPECT_EQ(a.s, b.s);
        if (a.type == VType::arr) {
            EXPECT_EQ(a.elem, b.elem);
            ASSERT_EQ(a.items.size(), b.items.size());
            for (size_t i = 0; i < a.items.size(); ++i) same(a.items[i], b.items[i]);
        }
    };
    for (size_t i = 0; i < kv.size(); ++i) {
        EXPECT_EQ(f.kv[i].key, kv[i].key);
        same(f.kv[i].value, kv[i].value);
    }
    int64_t v = 0;
    EXPECT_TRUE(f.find("i8")->int_in(-10, 10, v));
    EXPECT_EQ(v, -5);
    EXPECT_FALSE(f.find("u64")->int_in(0, INT64_MAX, v));
    EXPECT_EQ(f.find("f32")->as_double(), -1.5);
    ASSERT_EQ(f.tensors.size(), 1u);
    EXPECT_EQ(f.tensors[0].size, 68u);  // two Q8_0 blocks of 34 bytes
    EXPECT_EQ(f.tensors[0].bytes[67], 67);
    std::filesystem::remove(p);
}

TEST(Gguf, TensorBytesChecksShapes) {
    const int64_t ok[] = {64, 3};
    EXPECT_EQ(tensor_bytes(t_q8_0, ok, "x"), 3u * 2 * 34);
    EXPECT_EQ(tensor_bytes(t_q4_k, std::vector<int64_t>{512, 2}, "x"), 2u * 2 * 144);
    expect_bad([] { tensor_bytes(t_q8_0, std::vector<int64_t>{33}, "P: tensor 'w'"); }, "P", "not a whole number of Q8_0 blocks");
    expect_bad([] { tensor_bytes(99, std::vector<int64_t>{32}, "P: tensor 'w'"); }, "P", "unknown ggml type 99");
    expect_bad([] { tensor_bytes(t_f32, std::vector<int64_t>{1ll << 40, 1ll << 30}, "P: tensor 'w'"); }, "P", "overflows");
    expect_bad([] { tensor_bytes(t_f32, std::vector<int64_t>{-1}, "P: tensor 'w'"); }, "P", "negative dimension");
}

TEST(GgufBad, MagicAndVersion) {
    Bytes x = hand_image();
    x.b[0] = 'X';
    expect_bad([&] { parse(x.b, "m.gguf"); }, "m.gguf", "bad magic");
    x = hand_image();
    x.b[4] = 2;
    expect_bad([&] { parse(x.b, "v.gguf"); }, "v.gguf", "unsupported GGUF version 2");
    expect_bad([&] { parse(std::vector<uint8_t>{'G', 'G'}, "s.gguf"); }, "s.gguf", "too short");
}

// Every prefix shorter than the end of the last tensor's bytes is refused; longer ones (cutting
// only the trailing padding) hold every tensor whole and parse.
TEST(GgufBad, EveryTruncation) {
    const Bytes x = hand_image();
    const size_t end_of_data = x.b.size() - 64 + 32 + 24;
    for (size_t n = 0; n < x.b.size(); ++n) {
        const std::span<const uint8_t> pre(x.b.data(), n);
        if (n < end_of_data) {
            EXPECT_THROW(parse(pre, "t.gguf"), BadInput) << "prefix " << n;
        } else {
            EXPECT_NO_THROW(parse(pre, "t.gguf")) << "prefix " << n;
        }
    }
}

TEST(GgufBad, CountsLargerThanTheFile) {
    Bytes x;
    x.u(0x46554747, 4).u(3, 4).u(0, 8).u(1ull << 60, 8);
    expect_bad([&] { parse(x.b, "c.gguf"); }, "c.gguf", "metadata count 1152921504606846976 is more than");
    x = {};
    x.u(0x46554747, 4).u(3, 4).u(1ull << 40, 8).u(0, 8);
    expect_bad([&] { parse(x.b, "c.gguf"); }, "c.gguf", "tensor count 1099511627776 is more than");
    x = {};
    x.u(0x46554747, 4).u(3, 4).u(0, 8).u(1, 8).s("k").u(9, 4).u(8, 4).u(1ull << 50, 8);
    expect_bad([&] { parse(x.b, "c.gguf"); }, "c.gguf", "array length 1125899906842624 is more than");
    x = {};
    x.u(0x46554747, 4).u(3, 4).u(0, 8).u(1, 8).s("k").u(8, 4).u(~0ull, 8);
    expect_bad([&] { parse(x.b, "c.gguf"); }, "c.gguf", "truncated: string value");
}

TEST(GgufBad, Values) {
    auto one_kv = [](uint32_t type, auto&& body) {
        Bytes x;
        x.u(0x46554747, 4).u(3, 4).u(0, 8).u(1, 8).s("key").u(type, 4);
        body(x);
        return x.b;
    };
    expect_bad([&] { parse(one_kv(13, [](Bytes&) {}), "v.gguf"); }, "v.gguf", "unknown value type 13");
    // A name from the file is echoed escaped, so that the message stays one line.
    Bytes nl;
    nl.u(0x46554747, 4).u(3, 4).u(0, 8).u(1, 8).s("ke\ny\xff").u(13, 4);
    expect_bad([&] { parse(nl.b, "v.gguf"); }, "v.gguf", "key 'ke\\ny\\xff': unknown value type 13");
    expect_bad([&] { parse(one_kv(7, [](Bytes& x) { x.u(2, 1); }), "v.gguf"); }, "v.gguf", "bool value 2");
    expect_bad([&] { parse(one_kv(9, [](Bytes& x) { x.u(77, 4).u(0, 8); }), "v.gguf"); }, "v.gguf",
               "unknown array element type 77");
    // Arrays nested nine deep.
    expect_bad([&] {
        parse(one_kv(9, [](Bytes& x) {
                  for (int i = 0; i < 9; ++i) x.u(9, 4).u(1, 8);
                  x.u(4, 4).u(0, 8);
              }),
              "v.gguf");
    }, "v.gguf", "nested deeper");
    // Alignment must be a uint32 power of two.
    Bytes a;
    a.u(0x46554747, 4).u(3, 4).u(0, 8).u(1, 8).s("general.alignment").u(4, 4).u(48, 4);
    expect_bad([&] { parse(a.b, "a.gguf"); }, "a.gguf", "general.alignment 48 is not a power of two");
    Bytes d;
    d.u(0x46554747, 4).u(3, 4).u(0, 8).u(2, 8).s("k").u(4, 4).u(1, 4).s("k").u(4, 4).u(2, 4);
    expect_bad([&] { parse(d.b, "d.gguf"); }, "d.gguf", "duplicate metadata key 'k'");
}

// One tensor info edited in the hand image.
std::vector<uint8_t> with_tensor(uint32_t nd, std::vector<uint64_t> ne, uint32_t type, uint64_t offset,
                                 uint64_t offset_b = 32, const std::string& name_b = "b") {
    Bytes x;
    x.u(0x46554747, 4).u(3, 4).u(2, 8).u(0, 8);
    x.s("a").u(nd, 4);
    for (uint64_t n : ne) x.u(n, 8);
    x.u(type, 4).u(offset, 8);
    x.s(name_b).u(1, 4).u(4, 8).u(0, 4).u(offset_b, 8);
    x.pad(32);
    x.b.resize(x.b.size() + 512, 0);
    return x.b;
}

TEST(GgufBad, TensorInfos) {
    EXPECT_NO_THROW(parse(with_tensor(1, {4}, t_f32, 0), "ok.gguf"));
    expect_bad([] { parse(with_tensor(1, {4}, t_f32, 4096), "o.gguf"); }, "o.gguf", "tensor 'a' (bytes 4096..4096+16");
    expect_bad([] { parse(with_tensor(1, {4}, t_f32, ~0ull & ~31ull), "o.gguf"); }, "o.gguf", "lies outside the file");
    expect_bad([] { parse(with_tensor(1, {64}, t_f32, 0), "o.gguf"); }, "o.gguf", "tensors 'a' and 'b' overlap");
    expect_bad([] { parse(with_tensor(1, {64}, t_f32, 0, 32, "b\r\n"), "o.gguf"); }, "o.gguf",
               "tensors 'a' and 'b\\r\\n' overlap");
    expect_bad([] { parse(with_tensor(1, {4}, t_f32, 0, 0), "o.gguf"); }, "o.gguf", "overlap");
    expect_bad([] { parse(with_tensor(1, {4}, t_f32, 8), "o.gguf"); }, "o.gguf", "offset 8 is not a multiple of the alignment 32");
    expect_bad([] { parse(with_tensor(5, {1, 1, 1, 1, 1}, t_f32, 0), "o.gguf"); }, "o.gguf", "n_dims 5");
    expect_bad([] { parse(with_tensor(0, {}, t_f32, 0), "o.gguf"); }, "o.gguf", "n_dims 0");
    expect_bad([] { parse(with_tensor(1, {4}, 42, 0), "o.gguf"); }, "o.gguf", "tensor 'a': unknown ggml type 42");
    expect_bad([] { parse(with_tensor(1, {40}, t_q8_0, 0), "o.gguf"); }, "o.gguf", "not a whole number of Q8_0 blocks");
    expect_bad([] { parse(with_tensor(2, {1ull << 62, 1ull << 62}, t_f32, 0), "o.gguf"); }, "o.gguf", "overflows");
    expect_bad([] { parse(with_tensor(1, {1ull << 63}, t_f32, 0), "o.gguf"); }, "o.gguf", "too large");
    expect_bad([] { parse(with_tensor(1, {4}, t_f32, 0, 64, "a"), "o.gguf"); }, "o.gguf", "duplicate tensor 'a'");
}

TEST(GgufBad, Files) {
    expect_bad([] { Mapping m("/nonexistent/x.gguf"); }, "/nonexistent/x.gguf", "cannot open");
    const std::string p = temp_path("empty.gguf");
    { std::ofstream f(p); }
    expect_bad([&] { Mapping m(p); }, p, "empty file");
    std::filesystem::remove(p);
    expect_bad([] { Mapping m("/tmp"); }, "/tmp", "not a regular file");
}

}  // namespace
}  // namespace bitgate::gguf
