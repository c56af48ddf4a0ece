// The defective attention kernels behind kernels/mutants/attention_mutants.cpp: the real kernels
// (kernels/attention_kernels.cuh) compiled with one defect switched on.
#include "../attention_launch.cuh"
#include "bitgate/spec.hpp"

namespace bitgate::cuda {

namespace {

using attn::Bug;

template <Bug B>
int prefill(const Shape& s, const DeviceIo& io) {
    return attn::launch_prefill<B>(io.input<float>(0), io.input<uint16_t>(1), io.input<uint16_t>(2), s["n_q"], s["L"],
                                   s["ctx"], s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>(0),
                                   static_cast<cudaStream_t>(io.stream));
}

template <Bug B>
int decode(const Shape& s, const DeviceIo& io) {
    return attn::launch_decode<B>(io.input<float>(0), io.input<uint16_t>(1), io.input<uint16_t>(2), s["L"], s["ctx"],
                                  s["n_head"], s["n_kv_head"], s["head_dim"], io.output<float>(0),
                                  io.workspace<float>(0), static_cast<cudaStream_t>(io.stream));
}

BITGATE_DEVICE("attention", "m_non_causal", prefill<Bug::non_causal>);
BITGATE_DEVICE("attention", "m_kv_head_mod", prefill<Bug::kv_head_mod>);
BITGATE_DEVICE("attention", "m_tail_unwritten", prefill<Bug::tail_unwritten>);
BITGATE_DEVICE("attention", "m_decode_kv_head_mod", decode<Bug::kv_head_mod>);
BITGATE_DEVICE("attention", "m_skip_last_split", decode<Bug::skip_last_split>);
BITGATE_DEVICE("attention", "m_read_past_L", decode<Bug::read_past_L>);

}  // namespace

}  // namespace bitgate::cuda
