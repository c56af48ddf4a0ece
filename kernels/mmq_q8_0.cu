#include "mmq_q8_0.cuh"

#include <stdexcept>

#include "mmq_q8_0_kernel.cuh"
#include "sm_count.cuh"

namespace bitgate::cuda {

namespace {

// Enough CTAs for `waves` full waves of the card at the tiling's residency?
template <class T>
bool fills(int64_t n, int64_t N, int sms, int waves) {
    const int64_t ctas = ((n + 63) / 64 + T::TB - 1) / T::TB * ((N + T::BN - 1) / T::BN);
    return ctas >= int64_t(sms) * T::MIN_CTAS * waves;
}

MmqTiling choose(int64_t n, int64_t N) {
    const int sms = sm_count();  // the shared count: an override reaches this choice
    if (fills<mmq_impl::Tile128x128>(n, N, sms, 1)) return MmqTiling::t128x128;
    if (fills<mmq_impl::Tile64x128>(n, N, sms, 1)) return MmqTiling::t64x128;
    return MmqTiling::t64x64;
}

}  // namespace

void mmq_q8_0_add(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, const float* bias, const float* res,
                  float* C, int64_t n, int64_t N, int64_t K, MmqTiling tiling, cudaStream_t stream) {
    if (reinterpret_cast<uintptr_t>(qs) % 16 != 0 || reinterpret_cast<uintptr_t>(sda) % 16 != 0)
        throw std::invalid_argument("mmq_q8_0: the plane (qs, sda) must be 16-byte aligned");
    if (tiling == MmqTiling::automatic) tiling = choose(n, N);
    switch (tiling) {
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
