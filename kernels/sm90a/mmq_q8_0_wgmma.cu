// mmq_q8_0, Hopper variant `wgmma`: the launcher and its registration. The kernel and its design
// are in mmq_q8_0_wgmma_kernel.cuh; built for sm_90a only (cmake/sm90a.cmake): where it is not
// built the variant has no device launcher and the engine skips its device checks with that reason.
#include "mmq_q8_0_wgmma.cuh"

#include "bitgate/spec.hpp"
#include "mmq_q8_0_wgmma_kernel.cuh"

namespace bitgate::cuda {

void mmq_q8_0_wgmma(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
                    int64_t K, bool overlap, cudaStream_t stream) {
    using namespace mmq_wgmma;
    if (overlap)
        launch<Pipeline::overlapped>(qs, sda, w, C, n, N, K, stream);
    else
        launch<Pipeline::serial>(qs, sda, w, C, n, N, K, stream);
}

namespace {

DeviceLauncher launcher(bool overlap) {
    return [overlap](const Shape& s, const DeviceIo& io) {
        mmq_q8_0_wgmma(io.input<uint8_t>(0), io.input<uint32_t>(1), io.input<BlockQ8_0>(2), io.output<float>(0), s["n"],
                       s["N"], s["K"], overlap, static_cast<cudaStream_t>(io.stream));
        return 1;
    };
}

BITGATE_DEVICE("mmq_q8_0", "wgmma", launcher(true));
// The same kernel without the overlap, as a launcher only (no declared variant, so check and
// bench never list it): tests/mmq_q8_0_wgmma_test.cpp runs it beside `wgmma`, so that a device
// failure tells the pipeline's overlap apart from the rest.
BITGATE_DEVICE("mmq_q8_0", "wgmma_serial", launcher(false));

}  // namespace

}  // namespace bitgate::cuda
