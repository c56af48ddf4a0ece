// The defective mmq_q8_0 launchers: the real kernel template with one defect switched on.
#include "../mmq_q8_0_kernel.cuh"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;
using namespace bitgate::cuda::mmq_impl;

template <class T, Defect D>
DeviceLauncher defective() {
    return [](const Shape& s, const DeviceIo& io) {
        launch<T, D>(io.input<uint8_t>(0), io.input<uint32_t>(1), io.input<BlockQ8_0>(2), io.output<float>(0), s["n"],
                     s["N"], s["K"], static_cast<cudaStream_t>(io.stream));
        return 1;
    };
}

BITGATE_DEVICE("mmq_q8_0", "m_padded_token", (defective<Tile64x128, Defect::writes_padded_token>()));
BITGATE_DEVICE("mmq_q8_0", "m_past_n", (defective<Tile64x64, Defect::writes_past_n>()));
BITGATE_DEVICE("mmq_q8_0", "m_chunk_order", (defective<Tile64x128, Defect::chunk_order>()));
BITGATE_DEVICE("mmq_q8_0", "m_no_wait", (defective<Tile64x128, Defect::no_cp_async_wait>()));

}  // namespace
