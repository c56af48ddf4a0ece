// Defective quantize_pad40_t variants the engine must catch, each with the verdict it must give.
// Kernel mutants are held to v1's model; the host mutant is a wrong model held to v1's goldens.
#include <cmath>
#include <cstring>

#include "bitgate/f16.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "quantize_pad40_t.cuh"
#include "quantize_pad40_t.hpp"

namespace {

using namespace bitgate;

// roundf (ties away from zero) where the plane uses rintf (ties to even): differs on exact ties.
void roundf_model(const Shape& s, const HostIo& io) {
    const float* x = io.input<float>("x");
    const int64_t n = s["n"], d = s["d"], nchunk = pad40_nchunk(d);
    for (const char* plane : {"qs", "sda"}) std::memset(io.output_bytes(plane).data(), 0, io.output_bytes(plane).size());
    int8_t q[kPad40Chunk];
    for (int64_t t = 0; t < n; ++t)
        for (int64_t c = 0; c < nchunk; ++c) {
            const float* e = x + t * d + c * kPad40Chunk;
            float am = 0.0f;
            for (int j = 0; j < kPad40Chunk; ++j) am = std::fmax(am, std::fabs(e[j]));
            const float dd = am / 127.0f, di = dd != 0.0f ? 1.0f / dd : 0.0f;
            int32_t ssum = 0;
            for (int j = 0; j < kPad40Chunk; ++j) {
                const float v = e[j] * di;
                const float r = v == v ? std::round(v) : 0.0f;
                q[j] = r >= 127.0f ? 127 : r <= -128.0f ? -128 : int8_t(r);
                ssum += q[j];
            }
            ref::pad40_store_chunk(io.output<uint8_t>("qs"), io.output<uint32_t>("sda"), t, c, nchunk, q,
                                   pad40_sda_word(f32_to_f16_rn(dd), ssum));
        }
}

using cuda::mutants::Pad40Defect;

DeviceLauncher defective([[maybe_unused]] Pad40Defect defect) {
    return BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
        cuda::mutants::quantize_pad40_t_defective(defect, io.input<float>("x"), s["n"], s["d"], io.output<uint8_t>("qs"),
                                                  io.output<uint32_t>("sda"), static_cast<cudaStream_t>(io.stream));
        return 1;
    });
}

BITGATE_VARIANT("quantize_pad40_t", kernel_mutant("v1", "m_tail_unwritten", "unwritten",
                                                  "skips the padded tokens n .. 64-padded instead of writing zeros",
                                                  defective(Pad40Defect::tail_unwritten)));
BITGATE_VARIANT("quantize_pad40_t", kernel_mutant("v1", "m_no_xor", "value_mismatch", "drops the swizzle's xor",
                                                  defective(Pad40Defect::no_xor)));
BITGATE_VARIANT("quantize_pad40_t", kernel_mutant("v1", "m_roundf", "value_mismatch",
                                                  "rounds with roundf instead of rintf (seen on ties)",
                                                  defective(Pad40Defect::roundf)));
BITGATE_VARIANT("quantize_pad40_t", (VariantSpec{.name = "m_model_roundf",
                                                 .summary = "host model rounding with roundf instead of rintf",
                                                 .model = roundf_model, .mutant = true,
                                                 .expect = "golden_mismatch", .golden_as = "v1"}));

}  // namespace
