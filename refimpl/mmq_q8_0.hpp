// Host model of mmq_q8_0: Q8_0 weights [N][K] times the quantize_pad40_t plane of n tokens
// -> f32 C [n][N], with the kernel's float epilogue (kernels/include/bitgate/mmq_epilogue.hpp,
// docs/mmq_q8_0.md).
#pragma once
#include <cstdint>

#include "bitgate/formats.hpp"
#include "host_path.hpp"

namespace bitgate::ref {

// The order in which a (token, row) pair's per-chunk terms are added.
enum class MmqOrder {
    ascending,       // the contract: acc = fma(term_c, dw_c, acc) for c = 0, 1, ..., nchunk-1
    stage_partials,  // a wrong order on purpose (mutant): per 4-chunk stage a partial from +0,
                     // then acc = acc + partial
};

// C[t][r] for t < n, r < N; nothing else is written. qs/sda: the plane of ceil(n/64) token
// blocks and K/32 chunks; w: N rows of K/32 blocks. `path` (host_path.hpp) changes the time only;
// a path this CPU lacks is refused (std::invalid_argument).
void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
              int64_t K, MmqOrder order = MmqOrder::ascending, HostPath path = HostPath::fastest);

}  // namespace bitgate::ref
