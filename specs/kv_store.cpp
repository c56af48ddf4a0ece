// The kv_store family: n new f32 k (or v) rows stored as f16 into the cache at pos0 .. pos0+n-1.
//
// The cache is read and written: the engine wants every output byte written, so the previous
// cache is an input (cache_in) and the output cache is its copy with the n positions stored over
// it (the copy is the device variant's preparation, untimed). Bytes outside the n positions must
// come out equal to cache_in: any stray write is a value mismatch (or out of bounds past the end).
#include <cstring>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/spec.hpp"
#include "device_copy.cuh"
#include "kv_store.cuh"
#include "kv_store.hpp"

namespace {

using namespace bitgate;

size_t cache_values(const Shape& s) { return size_t(s["heads"]) * size_t(s["ctx"]) * size_t(s["head_dim"]); }

#if defined(BITGATE_HAVE_CUDA)
// The cache is read and written by the forward: the engine's outputs must be wholly written, so
// the preparation copies the previous contents (cache_in) into cache and the launch stores the n
// new positions over them.
int copy_cache(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<uint16_t>("cache"), io.input<uint16_t>("cache_in"), cache_values(s) * 2,
                         static_cast<cudaStream_t>(io.stream));
    return 0;
}

int launch_v1(const Shape& s, const DeviceIo& io) {
    cuda::kv_store_f16(io.input<float>("kv"), s["n"], s["heads"], s["head_dim"], io.output<uint16_t>("cache"), s["ctx"],
                       s["pos0"], static_cast<cudaStream_t>(io.stream));
    return 1;
}
#endif

// The previous contents: finite f16 values of the profile (a stale byte stands out against them).
void fill_cache(const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
    const inputs::Stream st(r, "f16");
    for (size_t i = 0; i < out.size() / 2; ++i) {
        const uint16_t h = f32_to_f16_rn(inputs::f32_value(st, r.profile, i, uint64_t(s["head_dim"])));
        std::memcpy(out.data() + i * 2, &h, 2);
    }
}

FamilySpec spec() {
    return FamilySpec{
        .name = "kv_store",
        .summary = "f32 kv [n][heads][head_dim] -> f16 (round to nearest even) into cache [heads][ctx][head_dim] "
                   "at positions pos0 .. pos0+n-1, the rest of the cache unchanged",
        .dims = {{.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 512}, .doc = "tokens stored"},
                 {.name = "heads", .lo = 1, .hi = 8, .edges = {1, 2, 4}, .doc = "kv heads"},
                 {.name = "head_dim", .lo = 4, .hi = 256, .multiple = 4, .edges = {4, 64, 128, 256},
                  .doc = "values per head, a multiple of 4"},
                 {.name = "ctx", .lo = 1, .hi = 4096, .edges = {1, 64, 600, 2048, 4096}, .doc = "cache positions"},
                 {.name = "pos0", .lo = 0, .hi = 4095, .edges = {0, 1, 63, 64, 65}, .doc = "first position stored"}},
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["heads"] < 1) return "heads must be at least 1";
            if (s["head_dim"] < 4 || s["head_dim"] % 4 != 0) return "head_dim must be a positive multiple of 4";
            if (s["pos0"] < 0) return "pos0 must be at least 0";
            if (s["pos0"] + s["n"] > s["ctx"]) return "pos0 + n must be at most ctx";
            return "";
        },
        .tensors = {{.name = "kv", .role = Role::input, .elem = Elem::f32,
                     .bytes = [](const Shape& s) { return size_t(s["n"] * s["heads"] * s["head_dim"]) * 4; },
                     .generate = [](const Shape& s, const GenRequest& r, std::span<uint8_t> out) {
                         inputs::fill_f32(out, r, uint64_t(s["head_dim"]));
                     }},
                    {.name = "cache_in", .role = Role::input, .elem = Elem::f16,
                     .bytes = [](const Shape& s) { return cache_values(s) * 2; }, .generate = fill_cache},
                    {.name = "cache", .role = Role::output, .elem = Elem::f16,
                     .bytes = [](const Shape& s) { return cache_values(s) * 2; },
                     .decode = [](const Shape& s, size_t off) {
                         const size_t i = off / 2, hd = size_t(s["head_dim"]), ctx = size_t(s["ctx"]);
                         return "head " + std::to_string(i / (hd * ctx)) + " position " + std::to_string(i / hd % ctx) +
                                " value " + std::to_string(i % hd);
                     }}},
        .profiles = {"uniform", "normal", "outliers", "tiny", "signed_zero"},
        .variants = {{.name = "v1",
                      .summary = "one thread per 4 values: float4 read, 8-byte f16 write; the cache copy is the preparation",
                      .model = [](const Shape& s, const HostIo& io) {
                          uint16_t* cache = io.output<uint16_t>("cache");
                          std::memcpy(cache, io.input<uint16_t>("cache_in"), cache_values(s) * 2);
                          ref::kv_store_f16(io.input<float>("kv"), s["n"], s["heads"], s["head_dim"], cache, s["ctx"],
                                            s["pos0"]);
                      },
                      .launch = BITGATE_ON_DEVICE(launch_v1),
                      .prepare = BITGATE_ON_DEVICE(copy_cache)}},
        // The kernel's traffic: kv read once, the n positions written (the copy is untimed).
        .bytes_moved = [](const Shape& s) { return double(s["n"] * s["heads"] * s["head_dim"]) * 6.0; },
    };
}

BITGATE_FAMILY(spec());

}  // namespace
