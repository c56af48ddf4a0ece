// The attention family: causal GQA softmax attention over an F16 KV cache (docs/attention.md).
#include <cstring>
#include <string>

#include "attention.cuh"
#include "attention.hpp"
#include "bitgate/attention_order.hpp"
#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;

// Queries attending each key count, summed: the q.k pairs of one head.
double pairs(const Shape& s) {
    const double n_q = double(s["n_q"]), past = double(s["L"] - s["n_q"]);
    return n_q * past + n_q * (n_q + 1.0) / 2.0;
}

size_t cache_bytes(const Shape& s) { return size_t(s["n_kv_head"] * s["ctx"] * s["head_dim"]) * 2; }
size_t rows_bytes(const Shape& s) { return size_t(s["n_q"] * s["n_head"] * s["head_dim"]) * 4; }

std::string decode_rows(const Shape& s, size_t off) {
    const int64_t e = int64_t(off / 4), D = s["head_dim"], H = s["n_head"];
    return "query " + std::to_string(e / (H * D)) + " head " + std::to_string(e / D % H) + " dim " +
           std::to_string(e % D) + " byte " + std::to_string(off % 4);
}

std::string decode_cache(const Shape& s, size_t off) {
    const int64_t e = int64_t(off / 2), D = s["head_dim"], ctx = s["ctx"];
    return "kv head " + std::to_string(e / (ctx * D)) + " position " + std::to_string(e / D % ctx) + " dim " +
           std::to_string(e % D) + " byte " + std::to_string(off % 2);
}

std::string decode_part(const Shape& s, size_t off) {
    const int64_t e = int64_t(off / 4), row = s["head_dim"] + 4, splits = attn_splits(s["L"]);
    const int64_t r = e / row, f = e % row;
    return "head " + std::to_string(r / splits) + " split " + std::to_string(r % splits) + " " +
           (f < s["head_dim"] ? "acc[" + std::to_string(f) + "]" : f == s["head_dim"] ? std::string("m") : f == s["head_dim"] + 1 ? std::string("l") : std::string("pad"));
}

// The cache inputs: positions < L hold f16(2u), u uniform in [-1, 1) (the profile does not
// change them); positions L .. ctx-1 hold f16 NaN (0x7e00), which any read would carry into out.
void fill_kv_cache(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    const inputs::Stream st(r, "kv_cache");
    const int64_t L = s["L"], ctx = s["ctx"], D = s["head_dim"];
    const size_t n = out.size() / 2;
    for (size_t i = 0; i < n; ++i) {
        const int64_t pos = int64_t(i / size_t(D)) % ctx;
        const uint16_t h = pos < L ? f32_to_f16_rn(2.0f * st.uniform(i)) : uint16_t(0x7e00);
        std::memcpy(out.data() + 2 * i, &h, 2);
    }
}

std::string decode_valid(const Shape& s) { return ref::attention_decode_problem(s["n_q"], s["n_head"], s["n_kv_head"]); }

void model(const Shape& s, const HostIo& io) {
    ref::attention_f16kv(io.input<float>("q"), io.input<uint16_t>("k_cache"), io.input<uint16_t>("v_cache"), s["n_q"],
                         s["L"], s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>("out"));
}

#if defined(BITGATE_HAVE_CUDA)
int launch_prefill(const Shape& s, const DeviceIo& io) {
    return cuda::attention_prefill(io.input<float>("q"), io.input<uint16_t>("k_cache"), io.input<uint16_t>("v_cache"),
                                   s["n_q"], s["L"], s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"],
                                   io.output<float>("out"), static_cast<cudaStream_t>(io.stream));
}

int launch_decode(const Shape& s, const DeviceIo& io) {
    return cuda::attention_decode(io.input<float>("q"), io.input<uint16_t>("k_cache"), io.input<uint16_t>("v_cache"),
                                  s["L"], s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>("out"),
                                  io.workspace<float>("part"), static_cast<cudaStream_t>(io.stream));
}
#endif

TensorSpec cache(std::string name) {
    return TensorSpec{.name = std::move(name), .role = Role::input, .elem = Elem::f16, .bytes = cache_bytes,
                      .generate = fill_kv_cache, .decode = decode_cache};
}

FamilySpec spec() {
    return FamilySpec{
        .name = "attention",
        .summary = "causal GQA softmax attention, scale 1/sqrt(head_dim), f32 queries over an F16 KV cache: "
                   "prefill (n_q queries) and decode (1 query, split over keys)",
        .dims = {{.name = "n_q", .lo = 1, .hi = 130, .edges = {1, 2, 17, 63, 64, 65, 128},
                  .doc = "queries; query i sits at position L - n_q + i"},
                 // The edges past hi cross the fold's first group boundary (32 splits, 4096 keys):
                 // 33 splits with one key in the last, 33 whole, 34.
                 {.name = "L", .lo = 1, .hi = 560,
                  .edges = {1, 2, 64, 65, 127, 128, 129, 256, 257, 512, 513, 4097, 4224, 4352},
                  .doc = "valid cache positions (keys of the last query); splits of 128 keys, folded in groups of 32"},
                 {.name = "ctx", .lo = 1, .hi = 600, .edges = {520, 600},
                  .doc = "cache rows per kv head; positions L .. ctx-1 hold NaN the kernels must not read",
                  .at_least = "L"},
                 {.name = "n_head", .lo = 1, .hi = 16, .edges = {1, 2, 4, 7, 8, 14},
                  .doc = "query heads"},
                 {.name = "n_kv_head", .lo = 1, .hi = 4, .edges = {1, 2},
                  .doc = "kv heads; head h reads kv head h / (n_head / n_kv_head)"},
                 {.name = "head_dim", .lo = 64, .hi = 128, .multiple = 64, .doc = "64 or 128"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["head_dim"] != 64 && s["head_dim"] != 128) return "head_dim must be 64 or 128";
            if (s["n_kv_head"] < 1 || s["n_head"] < 1) return "n_head and n_kv_head must be at least 1";
            if (s["n_head"] % s["n_kv_head"] != 0) return "n_head must be a multiple of n_kv_head";
            if (s["n_q"] < 1) return "n_q must be at least 1";
            if (s["L"] < s["n_q"]) return "L must be at least n_q (the queries are the last n_q positions)";
            if (s["ctx"] < s["L"]) return "ctx must be at least L";
            if (s["ctx"] > (int64_t(1) << 20)) return "ctx must be at most 2^20";
            if (s["n_q"] * s["n_head"] > (int64_t(1) << 24)) return "n_q * n_head must be at most 2^24";
            return "";
        },
        .tensors = {{.name = "q", .role = Role::input, .elem = Elem::f32, .bytes = rows_bytes,
                     .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
                         inputs::fill_f32(out, r, uint64_t(s["head_dim"]));
                     },
                     .decode = decode_rows},
                    cache("k_cache"),
                    cache("v_cache"),
                    {.name = "out", .role = Role::output, .elem = Elem::f32, .bytes = rows_bytes, .decode = decode_rows},
                    // The decode path's per-split partial results: rows of acc[head_dim], m, l and two
                    // unused floats (16-byte rows) per head and split.
                    {.name = "part", .role = Role::workspace, .elem = Elem::f32,
                     .bytes = [](const Shape& s) {
                         return size_t(s["n_head"] * attn_splits(s["L"]) * (s["head_dim"] + 4)) * 4;
                     },
                     .decode = decode_part}},
        .profiles = {"uniform", "normal", "outliers", "zeros"},
        .variants =
            {{.name = "prefill",
              .summary = "tiles of 64 queries x 64 keys of one head in shared memory, splits of 128 keys folded "
                         "in registers: 1 launch",
              .model = model,
              .claim = "attention",
              .launch = BITGATE_ON_DEVICE(launch_prefill)},
             {.name = "decode",
              .summary = "one block per (kv head, split of 128 keys) serving the kv head's query heads, then a "
                         "combine launch folding the splits in order (none for one split)",
              .model = model,
              .valid = decode_valid,
              .claim = "attention",
              .launch = BITGATE_ON_DEVICE(launch_decode)}},
        // The cache rows read (keys and values of the L valid positions), q and out.
        .bytes_moved = [](const Shape& s) {
            return 2.0 * double(s["n_kv_head"] * s["L"] * s["head_dim"]) * 2.0 + 2.0 * double(rows_bytes(s));
        },
        // q.k and p.v: a multiply and an add each, per pair, head and dim.
        .ops = [](const Shape& s) { return 4.0 * double(s["n_head"] * s["head_dim"]) * pairs(s); },
        .ops_unit = "TFLOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
