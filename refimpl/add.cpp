#include "add.hpp"

namespace bitgate::ref {

void add_f32(const float* a, const float* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

}  // namespace bitgate::ref
