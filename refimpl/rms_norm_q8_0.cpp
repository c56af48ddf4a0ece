#include "rms_norm_q8_0.hpp"

#include "quantize_q8_0.hpp"
#include "rms_norm.hpp"

namespace bitgate::ref {

void rms_norm_q8_0(const float* x, const float* w, float* y, BlockQ8_0* xq, int64_t n, int64_t d) {
    rms_norm_f32(x, w, y, n, d);
    quantize_q8_0(y, xq, n * d);  // rows of d values are whole blocks: row r's blocks follow row r-1's
}

}  // namespace bitgate::ref
