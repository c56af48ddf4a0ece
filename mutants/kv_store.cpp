// Defective kv_store variants the engine must catch: a kernel that also writes the position after
// the last one (into the cache: a value mismatch; past the cache's end when pos0 + n = ctx: out
// of bounds), and a host model that truncates to f16 instead of rounding to nearest even.
#include <cmath>
#include <cstring>

#include "bitgate/f16.hpp"
#include "bitgate/spec.hpp"
#include "../kernels/device_copy.cuh"
#include "kv_store.cuh"

namespace {

using namespace bitgate;

void truncating_model(const Shape& s, const HostIo& io) {
    const int64_t n = s["n"], heads = s["heads"], hd = s["head_dim"], ctx = s["ctx"], pos0 = s["pos0"];
    uint16_t* cache = io.output<uint16_t>("cache");
    std::memcpy(cache, io.input<uint16_t>("cache_in"), size_t(heads) * size_t(ctx) * size_t(hd) * 2);
    const float* kv = io.input<float>("kv");
    for (int64_t t = 0; t < n; ++t)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t j = 0; j < hd; ++j) {
                const float x = kv[(t * heads + h) * hd + j];
                uint16_t r = f32_to_f16_rn(x);
                // The defect: toward zero whenever rounding went away from it.
                if (r != 0x7fffu && (r & 0x7fffu) != 0 && (r & 0x7c00u) != 0x7c00u &&
                    std::fabs(f16_to_f32(r)) > std::fabs(x))
                    r = uint16_t(r - 1);
                cache[(h * ctx + pos0 + t) * hd + j] = r;
            }
}

#if defined(BITGATE_HAVE_CUDA)
// The real variant's preparation: the previous cache copied into the output cache.
int copy_cache(const Shape& s, const DeviceIo& io) {
    cuda::copy_on_device(io.output<uint16_t>("cache"), io.input<uint16_t>("cache_in"),
                         size_t(s["heads"] * s["ctx"] * s["head_dim"]) * 2, static_cast<cudaStream_t>(io.stream));
    return 0;
}

int one_past(const Shape& s, const DeviceIo& io) {
    cuda::mutants::kv_store_f16_one_past(io.input<float>("kv"), s["n"], s["heads"], s["head_dim"],
                                         io.output<uint16_t>("cache"), s["ctx"], s["pos0"],
                                         static_cast<cudaStream_t>(io.stream));
    return 1;
}
#endif

VariantSpec one_past_mutant() {
    VariantSpec v = kernel_mutant("v1", "m_one_past", "out_of_bounds|value_mismatch",
                                  "kernel also writes position pos0 + n (its first 4 values, from the last token)",
                                  BITGATE_ON_DEVICE(one_past));
    v.prepare = BITGATE_ON_DEVICE(copy_cache);
    return v;
}

BITGATE_VARIANT("kv_store", one_past_mutant());
BITGATE_VARIANT("kv_store", (VariantSpec{.name = "m_model_truncate", .summary = "host model truncating to f16",
                                         .model = truncating_model, .mutant = true, .expect = "golden_mismatch",
                                         .golden_as = "v1"}));

}  // namespace
