#include "embed.cuh"

#include <cuda_fp16.h>

namespace bitgate::cuda {

namespace {

constexpr int kThreads = 256;

// One thread per 4 output values (one float4 store), token-major: a warp writes 512 contiguous
// bytes and reads the matching 128 (f32), 64 (f16) or 4 x 34 (Q8_0) bytes of one table row.
template <class Load>
__global__ void embed_kernel(const int32_t* __restrict__ ids, int64_t words_per_row, int64_t words,
                             float4* __restrict__ out, Load load) {
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= words) return;
    const int64_t t = i / words_per_row, w = i % words_per_row;
    out[i] = load(int64_t(ids[t]), w);
}

struct LoadF32 {
    const float4* table;
    int64_t words_per_row;
    __device__ float4 operator()(int64_t row, int64_t w) const { return table[row * words_per_row + w]; }
};

struct LoadF16 {
    const uint2* table;  // 4 halves per 8-byte word
    int64_t words_per_row;
    __device__ float4 operator()(int64_t row, int64_t w) const {
        const uint2 h = table[row * words_per_row + w];
        return make_float4(__half2float(__ushort_as_half(uint16_t(h.x))), __half2float(__ushort_as_half(uint16_t(h.x >> 16))),
                           __half2float(__ushort_as_half(uint16_t(h.y))), __half2float(__ushort_as_half(uint16_t(h.y >> 16))));
    }
};

struct LoadQ8 {
    const BlockQ8_0* table;
    int64_t blocks_per_row;
    // Word w holds values 4(w % 8) .. +3 of block w / 8. The block is only 2-byte aligned, so the
    // scale and the four quants come from 16-bit loads.
    __device__ float4 operator()(int64_t row, int64_t w) const {
        const BlockQ8_0* b = table + row * blocks_per_row + w / 8;
        const uint16_t* h = reinterpret_cast<const uint16_t*>(b);
        const int j = int(w % 8) * 4;
        const float d = __half2float(__ushort_as_half(h[0]));
        const uint16_t lo = h[1 + j / 2], hi = h[2 + j / 2];
        const auto q = [](uint16_t v, int k) { return float(int8_t(uint8_t(v >> (8 * k)))); };
        return make_float4(q(lo, 0) * d, q(lo, 1) * d, q(hi, 0) * d, q(hi, 1) * d);
    }
};

template <class Load>
void launch(const int32_t* ids, int64_t d, int64_t n, float* out, Load load, cudaStream_t stream) {
    const int64_t words = n * (d / 4);
    if (words == 0) return;
    embed_kernel<<<unsigned((words + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        ids, d / 4, words, reinterpret_cast<float4*>(out), load);
}

}  // namespace

void embed_q8_0(const BlockQ8_0* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream) {
    launch(ids, d, n, out, LoadQ8{table, d / QK8_0}, stream);
}

void embed_f16(const uint16_t* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream) {
    launch(ids, d, n, out, LoadF16{reinterpret_cast<const uint2*>(table), d / 4}, stream);
}

void embed_f32(const float* table, int64_t d, const int32_t* ids, int64_t n, float* out, cudaStream_t stream) {
    launch(ids, d, n, out, LoadF32{reinterpret_cast<const float4*>(table), d / 4}, stream);
}

}  // namespace bitgate::cuda
