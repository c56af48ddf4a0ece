#include "proj_q8_0.cuh"

#include "proj_q8_0_impl.cuh"
#include "quantize_q8_0.cuh"

namespace bitgate::cuda {

using proj_q8_0_detail::Mats;
using proj_q8_0_detail::Sound;

void proj_q8_0_v1(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t k, cudaStream_t stream) {
    proj_q8_0_detail::launch_v1<Sound>(w, xq, y, n, k / QK8_0, stream);
}

void proj_q8_0_v2(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t k, cudaStream_t stream,
                  ProjQ8Path path) {
    const Mats m{{w}, {y}, 1};
    proj_q8_0_detail::launch_v2<Sound>(m, xq, n, k / QK8_0, proj_q8_0_v2_width(k / QK8_0), stream, path);
}

void proj_q8_0_v2_add(const BlockQ8_0* w, const BlockQ8_0* xq, const float* add, float* y, int64_t n, int64_t k,
                      cudaStream_t stream) {
    const Mats m{{w}, {y}, 1, {add}};
    proj_q8_0_detail::launch_v2<Sound>(m, xq, n, k / QK8_0, proj_q8_0_v2_width(k / QK8_0), stream, ProjQ8Path::automatic);
}

void proj_q8_0_fused4(const BlockQ8_0* const w[4], const BlockQ8_0* xq, float* const y[4], int64_t n, int64_t k,
                      cudaStream_t stream, ProjQ8Path path) {
    const Mats m{{w[0], w[1], w[2], w[3]}, {y[0], y[1], y[2], y[3]}, 4};
    proj_q8_0_detail::launch_v2<Sound>(m, xq, n, k / QK8_0, proj_q8_0_v2_width(k / QK8_0), stream, path);
}

void proj_q8_0_fused2(const BlockQ8_0* const w[2], const BlockQ8_0* xq, float* const y[2], int64_t n, int64_t k,
                      cudaStream_t stream, ProjQ8Path path) {
    const Mats m{{w[0], w[1]}, {y[0], y[1]}, 2};
    proj_q8_0_detail::launch_v2<Sound>(m, xq, n, k / QK8_0, proj_q8_0_v2_width(k / QK8_0), stream, path);
}

namespace {

using Projection = void (*)(const BlockQ8_0*, const BlockQ8_0*, float*, int64_t, int64_t, cudaStream_t);

void v2_automatic(const BlockQ8_0* w, const BlockQ8_0* xq, float* y, int64_t n, int64_t k, cudaStream_t stream) {
    proj_q8_0_v2(w, xq, y, n, k, stream);
}

int per_call(Projection project, const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
             BlockQ8_0* scratch, cudaStream_t stream) {
    const int64_t bpr = k / QK8_0;
    for (int64_t m = 0; m < g; ++m) {
        quantize_q8_0(x, scratch, k, stream);
        project(w + m * n * bpr, scratch, y + m * n, n, k, stream);
    }
    return int(2 * g);
}

}  // namespace

int proj_q8_0_per_call_v1(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                          BlockQ8_0* scratch, cudaStream_t stream) {
    return per_call(proj_q8_0_v1, x, w, y, n, k, g, scratch, stream);
}

int proj_q8_0_per_call_v2(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                          BlockQ8_0* scratch, cudaStream_t stream) {
    return per_call(v2_automatic, x, w, y, n, k, g, scratch, stream);
}

int proj_q8_0_hoist(const float* x, BlockQ8_0* xq, int64_t k, cudaStream_t stream) {
    quantize_q8_0(x, xq, k, stream);
    return 1;
}

int proj_q8_0_project_hoisted(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g,
                              cudaStream_t stream) {
    for (int64_t m = 0; m < g; ++m) proj_q8_0_v2(w + m * n * (k / QK8_0), xq, y + m * n, n, k, stream);
    return int(g);
}

int proj_q8_0_project_fused4(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k,
                             cudaStream_t stream) {
    const int64_t mat = n * (k / QK8_0);
    const BlockQ8_0* ws[4] = {w, w + mat, w + 2 * mat, w + 3 * mat};
    float* ys[4] = {y, y + n, y + 2 * n, y + 3 * n};
    proj_q8_0_fused4(ws, xq, ys, n, k, stream);
    return 1;
}

int proj_q8_0_project_fused2(const BlockQ8_0* xq, const BlockQ8_0* w, float* y, int64_t n, int64_t k,
                             cudaStream_t stream) {
    const BlockQ8_0* ws[2] = {w, w + n * (k / QK8_0)};
    float* ys[2] = {y, y + n};
    proj_q8_0_fused2(ws, xq, ys, n, k, stream);
    return 1;
}

int proj_q8_0_hoisted(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, int64_t g, BlockQ8_0* xq,
                      cudaStream_t stream) {
    return proj_q8_0_hoist(x, xq, k, stream) + proj_q8_0_project_hoisted(xq, w, y, n, k, g, stream);
}

int proj_q8_0_hoisted_fused4(const float* x, const BlockQ8_0* w, float* y, int64_t n, int64_t k, BlockQ8_0* xq,
                             cudaStream_t stream) {
    return proj_q8_0_hoist(x, xq, k, stream) + proj_q8_0_project_fused4(xq, w, y, n, k, stream);
}

}  // namespace bitgate::cuda
