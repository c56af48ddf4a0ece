#include "pad40_tensors.hpp"

#include <cstring>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::specs {

namespace {

std::string tile_words(int64_t nchunk, int64_t tile, uint32_t r) {
    const int64_t tb = tile / nchunk, c = tile % nchunk;
    return "token block " + std::to_string(tb) + " chunk " + std::to_string(c) + " token " + std::to_string(r) +
           " (t=" + std::to_string(tb * kPad40Tokens + r) + ")";
}

}  // namespace

TensorSpec rms_norm_weight(const std::string& name, const std::string& cols) {
    return {.name = name, .role = Role::input, .elem = Elem::f32,
            .bytes = [cols](const Shape& s) { return size_t(s[cols]) * 4; },
            .generate = [](const Shape&, const GenRequest& r, std::span<uint8_t> out) {
                const inputs::Stream st(r);
                for (size_t i = 0; i < out.size() / 4; ++i) {
                    const float v = 1.0f + 0.5f * st.uniform(i);
                    std::memcpy(out.data() + i * 4, &v, 4);
                }
            }};
}

TensorSpec pad40_input(const std::string& name, const std::string& cols) { return inputs::f32_input(name, "n", cols); }

TensorSpec pad40_f32_output(const std::string& name, const std::string& cols) {
    return {.name = name, .role = Role::output, .elem = Elem::f32,
            .bytes = [cols](const Shape& s) { return size_t(s["n"]) * size_t(s[cols]) * 4; },
            .decode = [cols](const Shape& s, size_t off) {
                const size_t i = off / 4, w = size_t(s[cols]);
                return "token " + std::to_string(i / w) + " feature " + std::to_string(i % w);
            }};
}

TensorSpec pad40_qs_tensor(const std::string& cols) {
    return {.name = "qs", .role = Role::output, .elem = Elem::i8,
            .bytes = [cols](const Shape& s) { return pad40_qs_bytes(s["n"], s[cols]); },
            .decode = [cols](const Shape& s, size_t off) {
                const int64_t nchunk = pad40_nchunk(s[cols]);
                const Pad40Where w = pad40_qs_where(uint32_t(off % kPad40TileBytes));
                const int64_t c = int64_t(off / kPad40TileBytes) % nchunk;
                return tile_words(nchunk, int64_t(off / kPad40TileBytes), w.r) + " word " + std::to_string(w.u) +
                       " byte " + std::to_string(w.j) + " (feature " +
                       std::to_string(c * kPad40Chunk + w.u * 4 + w.j) + ")";
            }};
}

TensorSpec pad40_sda_tensor(const std::string& cols) {
    return {.name = "sda", .role = Role::output, .elem = Elem::u32,
            .bytes = [cols](const Shape& s) { return pad40_sda_bytes(s["n"], s[cols]); },
            .decode = [cols](const Shape& s, size_t off) {
                const int64_t nchunk = pad40_nchunk(s[cols]);
                const size_t word = off / 4;
                return tile_words(nchunk, int64_t(word / kPad40TileSda), uint32_t(word % kPad40TileSda)) +
                       (off % 4 < 2 ? " d (f16)" : " ssum (int16)");
            }};
}

}  // namespace bitgate::specs
