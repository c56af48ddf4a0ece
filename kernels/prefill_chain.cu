#include "prefill_chain.cuh"

#include "bitgate/spec.hpp"
#include "mmq_q8_0.cuh"
#include "quantize_pad40_t.cuh"
#include "rms_norm.cuh"

namespace bitgate::cuda {

int prefill_chain_fused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                        int64_t n, int64_t K, int64_t N, cudaStream_t stream) {
    rms_norm_quant_f32_t(x, norm_w, work.y, n, K, work.qs, work.sda, stream);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K, MmqTiling::automatic, stream);
    return 2;
}

int prefill_chain_unfused(const float* x, const float* norm_w, const BlockQ8_0* w, float* C, const ChainWork& work,
                          int64_t n, int64_t K, int64_t N, cudaStream_t stream) {
    rms_norm_f32(x, norm_w, work.y, n, K, stream);
    quantize_pad40_t(work.y, n, K, work.qs, work.sda, stream);
    mmq_q8_0(work.qs, work.sda, w, C, n, N, K, MmqTiling::automatic, stream);
    return 3;
}

namespace {

using Chain = int (*)(const float*, const float*, const BlockQ8_0*, float*, const ChainWork&, int64_t, int64_t,
                      int64_t, cudaStream_t);

DeviceLauncher launcher(Chain chain) {
    return [chain](const Shape& s, const DeviceIo& io) {
        return chain(io.input<float>(0), io.input<float>(1), io.input<BlockQ8_0>(2), io.output<float>(0),
                     ChainWork{io.workspace<float>(0), io.workspace<uint8_t>(1), io.workspace<uint32_t>(2)}, s["n"],
                     s["K"], s["N"], static_cast<cudaStream_t>(io.stream));
    };
}

BITGATE_DEVICE("prefill_chain", "fused", launcher(prefill_chain_fused));
BITGATE_DEVICE("prefill_chain", "unfused", launcher(prefill_chain_unfused));

}  // namespace

}  // namespace bitgate::cuda
