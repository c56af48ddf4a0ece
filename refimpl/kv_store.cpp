#include "kv_store.hpp"

#include "bitgate/f16.hpp"

namespace bitgate::ref {

void kv_store_f16(const float* kv, int64_t n, int64_t n_kv_head, int64_t head_dim, uint16_t* cache, int64_t ctx,
                  int64_t pos0) {
    for (int64_t t = 0; t < n; ++t)
        for (int64_t h = 0; h < n_kv_head; ++h)
            for (int64_t j = 0; j < head_dim; ++j)
                cache[(h * ctx + pos0 + t) * head_dim + j] = f32_to_f16_rn(kv[(t * n_kv_head + h) * head_dim + j]);
}

}  // namespace bitgate::ref
