#include "swiglu_q8_0.hpp"

#include "quantize_q8_0.hpp"
#include "swiglu.hpp"

namespace bitgate::ref {

void swiglu_q8_0(const float* g, const float* u, float* out, BlockQ8_0* xq, int64_t n, int64_t f) {
    swiglu_f32(g, u, out, n, f);
    quantize_q8_0(out, xq, n * f);  // rows of f values are whole blocks: row r's blocks follow row r-1's
}

}  // namespace bitgate::ref
