// Defective rope variants the engine must catch: a kernel with sin and cos swapped (held to the
// v1 model), and a host model with the same defect (caught by the v1 golden lines).
#include <cstring>

#include "bitgate/rope_table.hpp"
#include "bitgate/spec.hpp"
#include "rope.cuh"

namespace {

using namespace bitgate;

void swapped_model(const Shape& s, const HostIo& io) {
    const int64_t n = s["n"], heads = s["heads"], hd = s["head_dim"], half = hd / 2;
    const float* x = io.input<float>("x");
    const int32_t* pos = io.input<int32_t>("pos");
    float* y = io.output<float>("out");
    for (int64_t t = 0; t < n; ++t)
        for (int64_t i = 0; i < half; ++i) {
            float c, sn;
            rope_cos_sin(pos[t], i, hd, float(s["base"]), &sn, &c);  // the defect: sin and cos swapped
            for (int64_t h = 0; h < heads; ++h) {
                const int64_t at = (t * heads + h) * hd + i;
                y[at] = x[at] * c - x[at + half] * sn;
                y[at + half] = x[at] * sn + x[at + half] * c;
            }
        }
}

BITGATE_VARIANT("rope", kernel_mutant("v1", "m_sin_cos_swapped", "value_mismatch", "kernel with sin and cos swapped",
                                      BITGATE_ON_DEVICE([](const Shape& s, const DeviceIo& io) {
                                          cuda::mutants::rope_neox_to_swapped(
                                              io.input<float>("x"), io.output<float>("out"), s["n"], s["heads"],
                                              s["head_dim"], io.input<int32_t>("pos"), float(s["base"]),
                                              static_cast<cudaStream_t>(io.stream));
                                          return 1;
                                      })));
BITGATE_VARIANT("rope", (VariantSpec{.name = "m_model_swapped", .summary = "host model with sin and cos swapped",
                                     .model = swapped_model, .mutant = true, .expect = "golden_mismatch",
                                     .golden_as = "v1"}));

}  // namespace
