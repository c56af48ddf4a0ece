// Lint fixture: an ordinary kernel compiled with --use_fast_math. The lint must reject its PTX
// (flush-to-zero everywhere, approximate reciprocal, unrounded multiplies).
namespace bitgate::lint_fixture {

__global__ void scale_fastmath(const float* __restrict__ x, float* __restrict__ y, float s, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * s + 1.0f / x[i];
}

}  // namespace bitgate::lint_fixture
