// Defective mmq_q8_0/wgmma launchers: the real sm_90a kernel with one defect switched on, declared
// here (not in kernels/mutants/) so that they exist exactly where the kernel is built. Each is held
// to the bytes of `wgmma`, on small shapes where its defect can show.
#include <string>

#include "../mmq_q8_0_wgmma_kernel.cuh"
#include "bitgate/spec.hpp"

namespace {

using namespace bitgate;
using namespace bitgate::cuda::mmq_wgmma;

template <Defect D>
DeviceLauncher defective() {
    return [](const Shape& s, const DeviceIo& io) {
        launch<Pipeline::overlapped, D>(io.input<uint8_t>(0), io.input<uint32_t>(1), io.input<BlockQ8_0>(2),
                                        io.output<float>(0), s["n"], s["N"], s["K"], static_cast<cudaStream_t>(io.stream));
        return 1;
    };
}

std::string small(const Shape& s) {
    return double(s["n"]) * double(s["N"]) * double(s["K"]) <= double(1 << 27) ? "" : "mutants run on small shapes only";
}

BITGATE_DEVICE("mmq_q8_0", "m_wgmma_chunk_order", defective<Defect::chunk_order>());
BITGATE_VARIANT("mmq_q8_0", kernel_mutant("wgmma", "m_wgmma_chunk_order", "value_mismatch",
                                          "wgmma: adds the chunks of each full stage in descending order",
                                          [](const Shape& s) -> std::string {
                                              const std::string w = small(s);
                                              if (!w.empty()) return w;
                                              return s["K"] >= 128 ? "" : "needs a full stage of chunks to reorder (K >= 128)";
                                          }));

// Reads the weights before the producers have repacked them: timing decides the values, so runs
// A and B usually differ (unwritten) but may agree on wrong bytes (value_mismatch).
BITGATE_DEVICE("mmq_q8_0", "m_wgmma_no_ready_wait", defective<Defect::no_ready_wait>());
BITGATE_VARIANT("mmq_q8_0", kernel_mutant("wgmma", "m_wgmma_no_ready_wait", "unwritten|value_mismatch",
                                          "wgmma: consumers skip the wait for the repacked weights", small));

}  // namespace
