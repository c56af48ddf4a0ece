// The embed family: token ids -> f32 rows gathered from a Q8_0, f16 or f32 embedding table.
#include <cstring>
#include <string>
#include <vector>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"
#include "embed.cuh"
#include "embed.hpp"
#include "errors.hpp"

namespace {

using namespace bitgate;

// The table type is a dimension: 0 f32, 1 f16, 2 q8_0; each variant runs where it matches.
constexpr int64_t kF32 = 0, kF16 = 1, kQ8 = 2;

size_t row_bytes(const Shape& s) {
    const int64_t d = s["d"];
    switch (s["type"]) {
        case kF16: return size_t(d) * 2;
        case kQ8: return size_t(d / QK8_0) * sizeof(BlockQ8_0);
        default: return size_t(d) * 4;
    }
}

void fill_table(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    if (s["type"] == kQ8) return inputs::fill_q8_0(out, r);
    if (s["type"] == kF32) return inputs::fill_f32(out, r, uint64_t(s["d"]));
    const inputs::Stream st(r, "f16");
    for (size_t i = 0; i < out.size() / 2; ++i) {
        uint16_t h;
        if (r.profile == "raw_q8") {  // any finite f16: subnormals, -0, up to 65504
            h = uint16_t(st.bits(i) >> 48);
            if ((h & 0x7c00u) == 0x7c00u) h &= 0xfbffu;
        } else {
            h = f32_to_f16_rn(inputs::f32_value(st, r.profile, i, uint64_t(s["d"])));
        }
        std::memcpy(out.data() + i * 2, &h, 2);
    }
}

// Ids in [0, vocab): the first token takes the last row and the second the first (the table's
// two ends), the others a hash of their position.
void fill_ids(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    const inputs::Stream st(r);
    const int64_t vocab = s["vocab"];
    for (size_t t = 0; t < out.size() / 4; ++t) {
        const int32_t id = t == 0 ? int32_t(vocab - 1) : t == 1 ? 0 : int32_t(st.bits(t) % uint64_t(vocab));
        std::memcpy(out.data() + t * 4, &id, 4);
    }
}

std::string decode_table(const Shape& s, size_t off) {
    const size_t rb = row_bytes(s);
    return "row " + std::to_string(off / rb) + " byte " + std::to_string(off % rb);
}

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// The preparation of every variant: the ids read back and checked before the launch, so an id
// out of range is bad input and the kernel never reads outside the table.
int validate_ids(const Shape& s, const DeviceIo& io) {
    const std::vector<int32_t> ids = cuda::read_back_i32(io.input<int32_t>("ids"), s["n"], stream_of(io));
    if (std::string why = ref::embed_ids_problem(ids.data(), s["n"], s["vocab"]); !why.empty())
        throw BadInput("ids: " + why);
    return 0;
}

int launch_f32(const Shape& s, const DeviceIo& io) {
    cuda::embed_f32(io.input<float>("table"), s["d"], io.input<int32_t>("ids"), s["n"], io.output<float>("out"),
                    stream_of(io));
    return 1;
}

int launch_f16(const Shape& s, const DeviceIo& io) {
    cuda::embed_f16(io.input<uint16_t>("table"), s["d"], io.input<int32_t>("ids"), s["n"], io.output<float>("out"),
                    stream_of(io));
    return 1;
}

int launch_q8_0(const Shape& s, const DeviceIo& io) {
    cuda::embed_q8_0(io.input<BlockQ8_0>("table"), s["d"], io.input<int32_t>("ids"), s["n"], io.output<float>("out"),
                     stream_of(io));
    return 1;
}
#endif

template <class Fn>
VariantSpec variant(std::string name, int64_t type, std::string summary, Fn fn, DeviceLauncher launch) {
    return VariantSpec{
        .name = name,
        .summary = std::move(summary),
        .model = [fn](const Shape& s, const HostIo& io) {
            const int32_t* ids = io.input<int32_t>("ids");
            if (std::string why = ref::embed_ids_problem(ids, s["n"], s["vocab"]); !why.empty())
                throw BadInput("ids: " + why);
            fn(s, io, ids);
        },
        .valid = [type, name](const Shape& s) -> std::string {
            return s["type"] == type ? "" : "variant " + name + " needs type=" + std::to_string(type);
        },
        .launch = std::move(launch),
        .prepare = BITGATE_ON_DEVICE(validate_ids),
    };
}

FamilySpec spec() {
    return FamilySpec{
        .name = "embed",
        .summary = "token ids -> f32 rows [n][d] from a [vocab][d] embedding table in f32 (type=0), f16 (1) or "
                   "Q8_0 (2, ggml's dequantize_row_q8_0)",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 512},
                  .doc = "tokens"},
                 {.name = "d", .lo = 32, .hi = 4096, .multiple = 32, .edges = {32, 64, 96, 896, 3584},
                  .doc = "model width, a multiple of 32"},
                 {.name = "vocab", .lo = 1, .hi = 5000, .edges = {1, 2, 3, 1024},
                  .doc = "table rows (ids are drawn in [0, vocab))"},
                 {.name = "type", .lo = 0, .hi = 2, .edges = {0, 1, 2}, .doc = "table type: 0 f32, 1 f16, 2 q8_0"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["d"] < 32 || s["d"] % 32 != 0) return "d must be a positive multiple of 32";
            if (s["vocab"] < 1 || s["vocab"] > (int64_t(1) << 31) - 1) return "vocab must be in [1, 2^31)";
            if (s["type"] < 0 || s["type"] > 2) return "type must be 0 (f32), 1 (f16) or 2 (q8_0)";
            return "";
        },
        .tensors = {{.name = "table", .role = Role::input, .elem = Elem::u8,
                     .bytes = [](const Shape& s) { return size_t(s["vocab"]) * row_bytes(s); },
                     .generate = fill_table, .decode = decode_table},
                    {.name = "ids", .role = Role::input, .elem = Elem::i32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; }, .generate = fill_ids},
                    {.name = "out", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * size_t(s["d"]) * 4; },
                     .decode = [](const Shape& s, size_t off) {
                         const size_t i = off / 4, d = size_t(s["d"]);
                         return "token " + std::to_string(i / d) + " feature " + std::to_string(i % d);
                     }}},
        .profiles = {"uniform", "raw_q8", "zeros", "tiny"},
        .variants = {variant("f32", kF32, "one thread per float4 of out: a float4 of the row",
                             [](const Shape& s, const HostIo& io, const int32_t* ids) {
                                 ref::embed_f32(io.input<float>("table"), s["d"], ids, s["n"], io.output<float>("out"));
                             },
                             BITGATE_ON_DEVICE(launch_f32)),
                     variant("f16", kF16, "one thread per float4 of out: 8 bytes of the row, __half2float",
                             [](const Shape& s, const HostIo& io, const int32_t* ids) {
                                 ref::embed_f16(io.input<uint16_t>("table"), s["d"], ids, s["n"], io.output<float>("out"));
                             },
                             BITGATE_ON_DEVICE(launch_f16)),
                     variant("q8_0", kQ8, "one thread per float4 of out: the block's scale and 4 quants by 16-bit loads",
                             [](const Shape& s, const HostIo& io, const int32_t* ids) {
                                 ref::embed_q8_0(io.input<BlockQ8_0>("table"), s["d"], ids, s["n"], io.output<float>("out"));
                             },
                             BITGATE_ON_DEVICE(launch_q8_0))},
        // The n rows read once, the ids, out written once (the rest of the table is never read).
        .bytes_moved = [](const Shape& s) {
            return double(s["n"]) * (double(row_bytes(s)) + 4.0 + double(s["d"]) * 4.0);
        },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
