// Defective mmq_q8_0 variants the engine must catch, each with the verdict it must give.
// Kernel mutants are held to the variant they imitate (kernel_mutant); the host mutant has a
// wrong model and must fail against the real variant's golden lines.
//
// Their shapes are kept small (n*N*K <= 2^27) so that `check --mutants` stays quick, and each one
// is valid only where its defect can show: a padded token exists, N is ragged, there are two
// chunks to reorder. The guard zones are 256 bytes, so the out-of-bounds mutants are limited to
// shapes whose overrun stays inside them (otherwise a far write could be a launch error instead).
#include <string>

#include "bitgate/spec.hpp"
#include "mmq_q8_0.cuh"
#include "mmq_q8_0.hpp"

namespace {

using namespace bitgate;

// Per 4-chunk stage a partial from +0, then acc + partial: the same terms, another float order.
void stage_partials_model(const Shape& s, const HostIo& io) {
    ref::mmq_q8_0(io.input<uint8_t>("qs"), io.input<uint32_t>("sda"), io.input<BlockQ8_0>("w"), io.output<float>("C"),
                  s["n"], s["N"], s["K"], ref::MmqOrder::stage_partials);
}

std::string small(const Shape& s) {
    return double(s["n"]) * double(s["N"]) * double(s["K"]) <= double(1 << 27) ? "" : "mutants run on small shapes only";
}

VariantSpec device_mutant(const char* name, [[maybe_unused]] cuda::mutants::MmqDefect defect, const char* expect,
                          const char* what, std::function<std::string(const Shape&)> where) {
    return kernel_mutant("mma", name, expect, what, BITGATE_ON_DEVICE([defect](const Shape& s, const DeviceIo& io) {
                             cuda::mutants::mmq_q8_0_defective(defect, io.input<uint8_t>("qs"), io.input<uint32_t>("sda"),
                                                               io.input<BlockQ8_0>("w"), io.output<float>("C"), s["n"],
                                                               s["N"], s["K"], static_cast<cudaStream_t>(io.stream));
                             return 1;
                         }),
                         [where](const Shape& s) { std::string w = small(s); return w.empty() ? where(s) : w; });
}

BITGATE_VARIANT("mmq_q8_0", device_mutant("m_padded_token", cuda::mutants::MmqDefect::padded_token, "out_of_bounds",
                                          "stores token n too (off by one): the first padded token, past the end of C",
                                          [](const Shape& s) -> std::string {
                                              if (s["n"] % 64 == 0) return "needs a padded token (n % 64 != 0)";
                                              if (s["N"] * 4 > 256) return "overrun of N floats must fit the 256-byte guard";
                                              return "";
                                          }));
BITGATE_VARIANT("mmq_q8_0", device_mutant("m_past_n", cuda::mutants::MmqDefect::past_n, "out_of_bounds",
                                          "the ragged 64-row tile stores its full width past N",
                                          [](const Shape& s) -> std::string {
                                              return s["N"] % 64 != 0 ? "" : "needs a ragged N (N % 64 != 0)";
                                          }));
BITGATE_VARIANT("mmq_q8_0", device_mutant("m_chunk_order", cuda::mutants::MmqDefect::chunk_order, "value_mismatch",
                                          "adds the chunks of each stage in descending order",
                                          [](const Shape& s) -> std::string {
                                              return s["K"] >= 128 ? "" : "needs chunks to reorder (K >= 128)";
                                          }));
// Reads a stage before its copies land: the values depend on timing, so runs A and B usually
// differ (unwritten) but may agree on wrong bytes (value_mismatch): a race names both classes.
BITGATE_VARIANT("mmq_q8_0", device_mutant("m_no_wait", cuda::mutants::MmqDefect::no_wait, "unwritten|value_mismatch", "never waits for its cp.async copies",
                                          [](const Shape&) -> std::string { return ""; }));
#if defined(BITGATE_HAVE_SM90A)
// The Hopper variant's defects, held to the bytes of `wgmma`. Their launcher is compiled for
// sm_90a with the kernel (kernels/sm90a/mutants/), so they are declared exactly where it is built.
VariantSpec wgmma_mutant(const char* name, cuda::mutants::WgmmaDefect defect, const char* expect, const char* what,
                         std::function<std::string(const Shape&)> where) {
    return kernel_mutant("wgmma", name, expect, what,
                         [defect](const Shape& s, const DeviceIo& io) {
                             cuda::mutants::mmq_q8_0_wgmma_defective(
                                 defect, io.input<uint8_t>("qs"), io.input<uint32_t>("sda"), io.input<BlockQ8_0>("w"),
                                 io.output<float>("C"), s["n"], s["N"], s["K"], static_cast<cudaStream_t>(io.stream));
                             return 1;
                         },
                         [where](const Shape& s) { std::string w = small(s); return w.empty() ? where(s) : w; });
}

BITGATE_VARIANT("mmq_q8_0", wgmma_mutant("m_wgmma_chunk_order", cuda::mutants::WgmmaDefect::chunk_order,
                                         "value_mismatch", "wgmma: adds the chunks of each full stage in descending order",
                                         [](const Shape& s) -> std::string {
                                             return s["K"] >= 128 ? "" : "needs a full stage of chunks to reorder (K >= 128)";
                                         }));
// The consumers read the weights while the producers repack them: timing decides the values, so
// runs A and B usually differ (unwritten) but may agree on wrong bytes (value_mismatch). (A
// consumer that skips its wait instead can run two phases ahead of a barrier and hang.)
BITGATE_VARIANT("mmq_q8_0", wgmma_mutant("m_wgmma_ready_early", cuda::mutants::WgmmaDefect::ready_early,
                                         "unwritten|value_mismatch", "wgmma: the producers signal the weights ready before repacking them",
                                         [](const Shape&) -> std::string { return ""; }));
#endif
BITGATE_VARIANT("mmq_q8_0", (VariantSpec{.name = "m_model_stage_order",
                                         .summary = "host model adding per-stage partial sums (another float order)",
                                         .model = stage_partials_model,
                                         .valid = [](const Shape& s) {
                                             std::string w = small(s);
                                             return w.empty() && s["K"] < 256 ? "needs two stages (K >= 256)" : w;
                                         },
                                         .mutant = true, .expect = "golden_mismatch", .golden_as = "mma"}));

}  // namespace
