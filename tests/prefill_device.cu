// Device side of the prefill tests: launch a kernel on poisoned buffers and bring the bytes back.
#include <cuda_runtime.h>

#include "../mutants/rms_norm.cuh"
#include "../kernels/quantize_pad40_t.cuh"
#include "../kernels/rms_norm.cuh"
#include "../kernels/swiglu.cuh"
#include "bitgate/exp.hpp"
#include "bitgate/pad40.hpp"
#include "prefill_device.hpp"

namespace bitgate::test {

namespace {

struct Buf {
    void* p = nullptr;
    size_t bytes = 0;
    explicit Buf(size_t b) : bytes(b) { cudaMalloc(&p, b ? b : 1); }
    ~Buf() { cudaFree(p); }
    template <class T> T* as() const { return static_cast<T*>(p); }
};

template <bool Nonpos>
__global__ void exp_all(uint32_t first, uint32_t count, uint32_t* out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    const float x = __uint_as_float(first + i);
    if (i < count) out[i] = __float_as_uint(Nonpos ? exp_det_nonpos(x) : exp_det(x));
}

}  // namespace

PrefillOut run_prefill(PrefillKernel k, int64_t n, int64_t d, const std::vector<float>& a, const std::vector<float>& b,
                       uint8_t poison) {
    PrefillOut o;
    const bool has_y = k != PrefillKernel::quantize;
    const bool has_plane = k != PrefillKernel::rms_norm_f32 && k != PrefillKernel::swiglu_f32;
    Buf da(a.size() * 4), db(b.size() * 4), dy(has_y ? size_t(n * d) * 4 : 0);
    Buf dqs(has_plane ? pad40_qs_bytes(n, d) : 0), dsda(has_plane ? pad40_sda_bytes(n, d) : 0);
    cudaMemcpy(da.p, a.data(), da.bytes, cudaMemcpyHostToDevice);
    if (!b.empty()) cudaMemcpy(db.p, b.data(), db.bytes, cudaMemcpyHostToDevice);
    for (Buf* x : {&dy, &dqs, &dsda}) cudaMemset(x->p, poison, x->bytes);
    const float* A = da.as<float>();
    const float* B = db.as<float>();
    switch (k) {
        case PrefillKernel::quantize: cuda::quantize_pad40_t(A, n, d, dqs.as<uint8_t>(), dsda.as<uint32_t>(), 0); break;
        case PrefillKernel::rms_norm_f32: cuda::rms_norm_f32(A, B, dy.as<float>(), n, d, 0); break;
        case PrefillKernel::rms_norm_quant:
            cuda::rms_norm_quant_f32_t(A, B, dy.as<float>(), n, d, dqs.as<uint8_t>(), dsda.as<uint32_t>(), 0);
            break;
        case PrefillKernel::swiglu_f32: cuda::swiglu_f32(A, B, dy.as<float>(), n, d, 0); break;
        case PrefillKernel::swiglu_quant:
            cuda::swiglu_quant_f32_t(A, B, dy.as<float>(), n, d, dqs.as<uint8_t>(), dsda.as<uint32_t>(), 0);
            break;
    }
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
        o.error = cudaGetErrorString(e);
        return o;
    }
    o.y.resize(dy.bytes / 4);
    o.qs.resize(dqs.bytes);
    o.sda.resize(dsda.bytes / 4);
    cudaMemcpy(o.y.data(), dy.p, dy.bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(o.qs.data(), dqs.p, dqs.bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(o.sda.data(), dsda.p, dsda.bytes, cudaMemcpyDeviceToHost);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) o.error = cudaGetErrorString(e);
    return o;
}

std::string exp_det_device(uint32_t first, uint32_t count, uint32_t* out, bool nonpos) {
    Buf d(size_t(count) * 4);
    const uint32_t blocks = (count + 255) / 256;
    if (nonpos)
        exp_all<true><<<blocks, 256>>>(first, count, d.as<uint32_t>());
    else
        exp_all<false><<<blocks, 256>>>(first, count, d.as<uint32_t>());
    if (cudaError_t e = cudaMemcpy(out, d.p, d.bytes, cudaMemcpyDeviceToHost); e != cudaSuccess)
        return cudaGetErrorString(e);
    return "";
}

}  // namespace bitgate::test
