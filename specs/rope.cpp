// The rope family: NEOX rotary embedding of q or k rows at given positions.
#include <cstring>
#include <string>
#include <vector>

#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"
#include "errors.hpp"
#include "rope.cuh"
#include "rope.hpp"

namespace {

using namespace bitgate;

size_t values(const Shape& s) { return size_t(s["n"]) * size_t(s["heads"]) * size_t(s["head_dim"]); }

// Positions in [0, 32767]: the first token at 32767 and the second at 0 (the table's ends), the
// others a hash of their index, so that every catalog line spans the whole range.
void fill_pos(const Shape&, const GenRequest& r, std::span<uint8_t> out) {
    const inputs::Stream st(r);
    for (size_t t = 0; t < out.size() / 4; ++t) {
        const int32_t p = t == 0 ? ref::kRopeMaxPos : t == 1 ? 0 : int32_t(st.bits(t) % uint64_t(ref::kRopeMaxPos + 1));
        std::memcpy(out.data() + t * 4, &p, 4);
    }
}

HostModel model(bool inplace) {
    return [inplace](const Shape& s, const HostIo& io) {
        const int32_t* pos = io.input<int32_t>("pos");
        if (std::string why = ref::rope_pos_problem(pos, s["n"]); !why.empty()) throw BadInput("pos: " + why);
        float* out = io.output<float>("out");
        if (inplace) {
            std::memcpy(out, io.input<float>("x"), values(s) * 4);
            ref::rope_neox(out, s["n"], s["heads"], s["head_dim"], pos, float(s["base"]));
        } else {
            ref::rope_neox_to(io.input<float>("x"), out, s["n"], s["heads"], s["head_dim"], pos, float(s["base"]));
        }
    };
}

#if defined(BITGATE_HAVE_CUDA)
cudaStream_t stream_of(const DeviceIo& io) { return static_cast<cudaStream_t>(io.stream); }

// The base is a dimension in units of 1 (1e4, 1e6).
float base_of(const Shape& s) { return float(s["base"]); }

// The positions read back and checked before the launch: one out of range is bad input.
int validate_pos(const Shape& s, const DeviceIo& io) {
    const std::vector<int32_t> pos = cuda::read_back_i32(io.input<int32_t>("pos"), s["n"], stream_of(io));
    if (std::string why = ref::rope_pos_problem(pos.data(), s["n"]); !why.empty()) throw BadInput("pos: " + why);
    return 0;
}

int launch_v1(const Shape& s, const DeviceIo& io) {
    cuda::rope_neox_to(io.input<float>("x"), io.output<float>("out"), s["n"], s["heads"], s["head_dim"],
                       io.input<int32_t>("pos"), base_of(s), stream_of(io));
    return 1;
}

// The in-place call as the forward makes it: x copied into out (preparation), then rotated there.
int validate_and_copy(const Shape& s, const DeviceIo& io) {
    validate_pos(s, io);
    cuda::copy_on_device(io.output<float>("out"), io.input<float>("x"), values(s) * 4, stream_of(io));
    return 0;
}

int launch_inplace(const Shape& s, const DeviceIo& io) {
    cuda::rope_neox(io.output<float>("out"), s["n"], s["heads"], s["head_dim"], io.input<int32_t>("pos"), base_of(s),
                    stream_of(io));
    return 1;
}
#endif

FamilySpec spec() {
    return FamilySpec{
        .name = "rope",
        .summary = "NEOX rotary embedding of x [n][heads][head_dim] f32 at positions pos (0..32767), "
                   "theta = pos * base^(-2i/head_dim), cos/sin from bitgate/rope_table.hpp",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 512},
                  .doc = "tokens"},
                 {.name = "heads", .lo = 1, .hi = 32, .edges = {1, 2, 4, 14, 28}, .doc = "heads (q: n_head, k: n_kv_head)"},
                 {.name = "head_dim", .lo = 2, .hi = 256, .multiple = 2, .edges = {2, 4, 62, 64, 66, 128, 256},
                  .doc = "values per head, even"},
                 {.name = "base", .lo = 10000, .hi = 1000000, .multiple = 10000, .edges = {10000, 1000000},
                  .doc = "rope frequency base (qwen2: 1000000)"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["heads"] < 1) return "heads must be at least 1";
            if (s["head_dim"] < 2 || s["head_dim"] % 2 != 0) return "head_dim must be a positive even number";
            if (s["base"] < 2 || s["base"] > 1000000000) return "base must be in [2, 1e9]";
            return "";
        },
        .tensors = {{.name = "x", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return values(s) * 4; },
                     .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
                         inputs::fill_f32(out, r, uint64_t(s["head_dim"]));
                     }},
                    {.name = "pos", .role = Role::input, .elem = Elem::i32,
                     .bytes = [](const Shape& s) { return size_t(s["n"]) * 4; }, .generate = fill_pos},
                    {.name = "out", .role = Role::output, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return values(s) * 4; },
                     .decode = [](const Shape& s, size_t off) {
                         const size_t i = off / 4, hd = size_t(s["head_dim"]), h = size_t(s["heads"]);
                         return "token " + std::to_string(i / (hd * h)) + " head " + std::to_string(i / hd % h) +
                                " value " + std::to_string(i % hd);
                     }}},
        .profiles = {"uniform", "normal", "outliers", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "rope_neox_to: one thread per (token, pair) and every head, or per (token, head, pair) below "
                                 "16,384 (token, pair) threads; cos/sin per thread",
                      .model = model(false), .claim = "rope",
                      .launch = BITGATE_ON_DEVICE(launch_v1), .prepare = BITGATE_ON_DEVICE(validate_pos)},
                     {.name = "inplace",
                      .summary = "rope_neox in place on a copy of x (the copy is the preparation)",
                      .model = model(true), .claim = "rope",
                      .launch = BITGATE_ON_DEVICE(launch_inplace), .prepare = BITGATE_ON_DEVICE(validate_and_copy)}},
        .bytes_moved = [](const Shape& s) { return double(values(s)) * 8.0 + double(s["n"]) * 4.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
