// Exhaustive host == device check of f32 -> f16 (round to nearest even): the device converts
// every f32 bit pattern with __float2half_rn, the host compares with f32_to_f16_rn.
#include <cuda_fp16.h>

#include <cstdint>

#include "bitgate/f16.hpp"
#include "exhaustive_device.hpp"

namespace {

__global__ void convert_all(uint32_t base, uint16_t* out, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __half_as_ushort(__float2half_rn(__uint_as_float(base + i)));
}

}  // namespace

uint64_t f16_device_mismatches(uint64_t* first_bad) {
    return bitgate::test::exhaustive_mismatches<uint16_t>(
        [](uint32_t base, uint32_t n, uint16_t* out) { convert_all<<<n / 256, 256>>>(base, out, n); },
        [](uint32_t bits) { return bitgate::f32_to_f16_rn(bitgate::f32_from_bits(bits)); }, first_bad);
}
