#include "mmq_q8_0.cuh"

#include <stdexcept>

#include "mmq_q8_0_kernel.cuh"
#include "sm_count.cuh"
#if defined(BITGATE_HAVE_SM90A)
#include "sm90a/mmq_q8_0_wgmma.cuh"
#endif

namespace bitgate::cuda {

namespace {

template <class T>
int64_t ctas_of(int64_t n, int64_t N) {
    return ((n + 63) / 64 + T::TB - 1) / T::TB * ((N + T::BN - 1) / T::BN);
}

// Enough CTAs for `waves` full waves of the card at the tiling's residency?
template <class T>
bool fills(int64_t n, int64_t N, int sms, int waves) {
    return ctas_of<T>(n, N) >= int64_t(sms) * T::MIN_CTAS * waves;
}

// The mma.sync tilings: the largest tile that still gives the card a full wave.
MmqTiling choose_mma(int64_t n, int64_t N, int sms) {
    if (fills<mmq_impl::Tile128x128>(n, N, sms, 1)) return MmqTiling::t128x128;
    if (fills<mmq_impl::Tile64x128>(n, N, sms, 1)) return MmqTiling::t64x128;
    return MmqTiling::t64x64;
}

// `wgmma` (one 128 x 128 CTA an SM) where it is built and the device runs it, once the shape
// gives at least half the card a CTA: measured faster than the mma.sync tiles there (112 CTAs,
// 3584 x 3584 at n = 512: 177.5 against 140.9 TOPS), 2x slower at 28 CTAs (the 0.5B's 896-row
// matrices at n = 512): bench/RESULTS.md, 2026-12-03, second and third. A grid of more than one
// wave must also fill two thirds of the slots its waves hold: 152 CTAs (4864 x 896 at n = 512,
// 1.15 waves) ran 10 us slower a call in the 0.5B forward than t64x64 (608 CTAs, three an SM),
// which it takes instead (RESULTS, 2026-12-04). Every choice is in the one claim group, so the
// device and the shape decide speed only.
MmqTiling choose(int64_t n, int64_t N) {
    const int sms = sm_count();  // the shared count: an override reaches this choice
#if defined(BITGATE_HAVE_SM90A)
    const int64_t ctas = ctas_of<mmq_impl::Tile128x128>(n, N), waves = (ctas + sms - 1) / sms;
    if (2 * ctas >= sms && mmq_q8_0_wgmma_runs_here())
        return waves == 1 || 3 * ctas >= 2 * int64_t(sms) * waves ? MmqTiling::wgmma : MmqTiling::t64x64;
#endif
    return choose_mma(n, N, sms);
}

}  // namespace

void mmq_q8_0_add(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, const float* bias, const float* res,
                  float* C, int64_t n, int64_t N, int64_t K, MmqTiling tiling, cudaStream_t stream) {
    if (reinterpret_cast<uintptr_t>(qs) % 16 != 0 || reinterpret_cast<uintptr_t>(sda) % 16 != 0)
        throw std::invalid_argument("mmq_q8_0: the plane (qs, sda) must be 16-byte aligned");
    if (tiling == MmqTiling::automatic) tiling = choose(n, N);
    if (tiling == MmqTiling::mma) tiling = choose_mma(n, N, sm_count());
    switch (tiling) {
        case MmqTiling::wgmma:
#if defined(BITGATE_HAVE_SM90A)
            mmq_q8_0_wgmma(qs, sda, w, C, n, N, K, /*overlap=*/true, stream, bias, res);
            break;
#else
            throw std::runtime_error("mmq_q8_0: the wgmma kernel is not built here (sm_90a, cmake/sm90a.cmake)");
#endif
        case MmqTiling::t128x128:
            mmq_impl::launch<mmq_impl::Tile128x128>(qs, sda, w, C, n, N, K, stream, bias, res);
            break;
        case MmqTiling::t64x128:
            mmq_impl::launch<mmq_impl::Tile64x128>(qs, sda, w, C, n, N, K, stream, bias, res);
            break;
        default: mmq_impl::launch<mmq_impl::Tile64x64>(qs, sda, w, C, n, N, K, stream, bias, res); break;
    }
}

void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N, int64_t K,
              MmqTiling tiling, cudaStream_t stream) {
    mmq_q8_0_add(qs, sda, w, nullptr, nullptr, C, n, N, K, tiling, stream);
}

}  // namespace bitgate::cuda
