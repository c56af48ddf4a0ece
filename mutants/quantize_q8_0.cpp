// Defective quantize_q8_0 variants the engine must catch, each with the verdict it must give.
// Kernel mutants are held to the variant they imitate (kernel_mutant); the host mutant has a
// wrong model and must fail against the real variant's golden lines.
#include <cmath>

#include "bitgate/f16.hpp"
#include "bitgate/q8_round.hpp"
#include "bitgate/spec.hpp"
#include "quantize_q8_0.cuh"
#include "quantize_q8_0.hpp"

namespace {

using namespace bitgate;

// rintf (ties to even) where ggml uses roundf (ties away): differs only on exact ties. q8_roundf
// of the rinted value keeps the real rounding's clamp (rint gives an integer, +-inf or NaN, and
// q8_roundf leaves integers as they are), so no cast is undefined and no other byte differs.
void rintf_model(const Shape& s, const HostIo& io) {
    const float* x = io.input<float>("x");
    BlockQ8_0* y = io.output<BlockQ8_0>("y");
    for (int64_t b = 0; b < s["k"] / QK8_0; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; ++j) amax = std::fmax(amax, std::fabs(x[b * QK8_0 + j]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_f16_rn(d);
        for (int j = 0; j < QK8_0; ++j) y[b].qs[j] = q8_roundf(std::rint(x[b * QK8_0 + j] * id));
    }
}

using cuda::mutants::Q8Defect;

DeviceLauncher defective([[maybe_unused]] Q8Defect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        return cuda::mutants::quantize_q8_0_defective(defect, io.input<float>("x"), io.output<BlockQ8_0>("y"), s["k"],
                                                      static_cast<cudaStream_t>(io.stream));
    });
}

BITGATE_VARIANT("quantize_q8_0", kernel_mutant("v1", "m_skip_last", "unwritten", "never writes the last Q8_0 block",
                                               defective(Q8Defect::skip_last)));
BITGATE_VARIANT("quantize_q8_0", kernel_mutant("v1", "m_past_end", "out_of_bounds", "writes one block past the end of y",
                                               defective(Q8Defect::past_end)));
BITGATE_VARIANT("quantize_q8_0", kernel_mutant("v1", "m_rintf", "value_mismatch",
                                               "rounds with rintf instead of roundf (seen on ties)",
                                               defective(Q8Defect::rintf)));
BITGATE_VARIANT("quantize_q8_0", kernel_mutant("v1", "m_writes_input", "input_modified", "scribbles on its input x",
                                               defective(Q8Defect::writes_input)));
BITGATE_VARIANT("quantize_q8_0", kernel_mutant("v1", "m_cached", "stale_on_reuse",
                                               "caches its result keyed on the input pointer", defective(Q8Defect::cached)));
BITGATE_VARIANT("quantize_q8_0", (VariantSpec{.name = "m_model_rintf", .summary = "host model rounding with rintf",
                                              .model = rintf_model, .mutant = true, .expect = "golden_mismatch",
                                              .golden_as = "v1"}));

}  // namespace
