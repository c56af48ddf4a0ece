// Exhaustive host == device check of the quantizers' rounding: the device rounds every f32 bit
// pattern with pad40_round_sat (one cvt.rni.sat.s8.f32), the host compares with the model's
// pad40_round (rintf, clamp to [-128, 127] in float, NaN -> 0).
#include <cstdint>

#include "../kernels/pad40_quant.cuh"
#include "bitgate/f16.hpp"
#include "bitgate/pad40.hpp"
#include "exhaustive_device.hpp"

namespace {

__global__ void round_all(uint32_t base, int8_t* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = bitgate::cuda::pad40_round_sat(__uint_as_float(base + i));
}

}  // namespace

uint64_t pad40_round_device_mismatches(uint64_t* first_bad) {
    return bitgate::test::exhaustive_mismatches<int8_t>(
        [](uint32_t base, uint32_t n, int8_t* out) { round_all<<<n / 256, 256>>>(base, out, n); },
        [](uint32_t bits) { return bitgate::pad40_round(bitgate::f32_from_bits(bits)); }, first_bad);
}
