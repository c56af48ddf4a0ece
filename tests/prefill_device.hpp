// Device runners for the prefill families' tests (tests/prefill_device.cu): plain C++ so the
// .cpp tests need no CUDA header. Outputs are poisoned with `poison` before the launch, so a byte
// the kernel never wrote shows up against the model.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bitgate::test {

enum class PrefillKernel { quantize, rms_norm_f32, rms_norm_quant, swiglu_f32, swiglu_quant };

struct PrefillOut {
    std::vector<float> y;        // the f32 output (empty for the quantizer)
    std::vector<uint8_t> qs;     // the planes (empty for the f32-only kernels)
    std::vector<uint32_t> sda;
    std::string error;           // "" or the CUDA error
};

#if defined(BITGATE_HAVE_CUDA)
// a: x (quantize, rms_norm) or g (swiglu), [n][d]; b: w [d] (rms_norm) or u [n][d] (swiglu).
PrefillOut run_prefill(PrefillKernel k, int64_t n, int64_t d, const std::vector<float>& a, const std::vector<float>& b,
                       uint8_t poison);

// exp_det (exp_det_nonpos with nonpos) on the device for the float bit patterns
// first .. first + count - 1, into out.
std::string exp_det_device(uint32_t first, uint32_t count, uint32_t* out, bool nonpos = false);
#else
// Host-only build: the device tests skip before they get here.
inline PrefillOut run_prefill(PrefillKernel, int64_t, int64_t, const std::vector<float>&, const std::vector<float>&,
                              uint8_t) {
    return PrefillOut{.error = "built without CUDA"};
}
inline std::string exp_det_device(uint32_t, uint32_t, uint32_t*, bool = false) { return "built without CUDA"; }
#endif

}  // namespace bitgate::test
