// Lint fixture: everything the contract allows, compiled with the project's flags; the lint must
// pass it. IEEE division, reciprocal and square root, explicit fmaf, both roundings, f16 RNE
// conversion, exact max/abs, shuffles and dp4a.
#include <cuda_fp16.h>

namespace bitgate::lint_fixture {

__global__ void allowed_ops(const float* __restrict__ x, const int* __restrict__ q, float* __restrict__ y,
                            __half* __restrict__ h, int* __restrict__ dot, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = x[i];
    float m = fabsf(v);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    const float d = m / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const float r = roundf(v * id) + rintf(v * id);
    y[i] = fmaf(r, d, sqrtf(m) - v * 0.5f);
    h[i] = __float2half_rn(d);
    dot[i] = __dp4a(q[i], q[i + n], dot[i]);
}

}  // namespace bitgate::lint_fixture
