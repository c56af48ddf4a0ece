// Lint fixture: compiled with the project's own flags, yet __expf goes through the MUFU
// approximation (ex2.approx.f32); the lint must name this kernel and that instruction.
namespace bitgate::lint_fixture {

__global__ void exp_intrinsic(const float* __restrict__ x, float* __restrict__ y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __expf(x[i]);
}

}  // namespace bitgate::lint_fixture
