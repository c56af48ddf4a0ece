// The quantize_pad40_t kernel's own source (kernels/quantize_pad40_t_kernel.cuh), run on the CPU
// under tests/cuda_sim.hpp, against the host model byte for byte: one chunk, ragged token blocks
// (padded tokens quantize zeros), several chunks and token blocks, the profiles whose chunks take
// the special paths (ties, all-zero chunks, subnormals, NaN and infinities), poisoned outputs.
// This is the host-side check of the kernel's tiling and indexing; the device check is
// `bitgate check --device`.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "cuda_sim.hpp"
#include "quantize_pad40_t.hpp"

namespace bitgate::cuda_sim {
using namespace bitgate::cuda::sim;
}
#define cuda cuda_sim  // the kernel lands in bitgate::cuda_sim: no symbol shared with the CUDA build
#include "../kernels/quantize_pad40_t_kernel.cuh"  // its #pragma unroll is nvcc's (CMakeLists.txt: -Wno-unknown-pragmas)
#undef cuda

using namespace bitgate;
namespace k = bitgate::cuda_sim;

namespace {

struct Plane {
    std::vector<uint8_t> qs;
    std::vector<uint32_t> sda;
    bool operator==(const Plane&) const = default;
};

Plane poisoned(int64_t n, int64_t d) {
    Plane p{std::vector<uint8_t>(pad40_qs_bytes(n, d), 0xa5), std::vector<uint32_t>(pad40_sda_bytes(n, d) / 4)};
    std::memset(p.sda.data(), 0xa5, p.sda.size() * 4);
    return p;
}

std::vector<float> gen(int64_t n, int64_t d, const char* profile) {
    std::vector<float> x(size_t(n * d));
    inputs::fill_f32({reinterpret_cast<uint8_t*>(x.data()), x.size() * 4},
                     GenRequest{.seed = 3, .profile = profile, .tensor = "x"}, uint64_t(d));
    return x;
}

// The launcher's grid (kernels/quantize_pad40_t.cu), run on the CPU with L lanes a chunk (the
// launcher picks 2 or 4 by the tile count; both must give the model's bytes at every shape).
template <int L>
Plane kernel(const std::vector<float>& x, int64_t n, int64_t d) {
    Plane p = poisoned(n, d);
    const int64_t nchunk = pad40_nchunk(d);
    k::launch(int(pad40_ntb(n) * nchunk), 1, L * kPad40Tokens, 0, [&] {
        k::pad40q::quantize_pad40_t_kernel<L>(x.data(), n, d, nchunk, p.qs.data(), p.sda.data());
    });
    return p;
}

Plane model(const std::vector<float>& x, int64_t n, int64_t d) {
    Plane p = poisoned(n, d);
    ref::quantize_pad40_t(x.data(), n, d, p.qs.data(), p.sda.data());
    return p;
}

}  // namespace

TEST(QuantizePad40Sim, KernelEqualsModel) {
    const struct { int64_t n, d; } shapes[] = {{1, 32}, {63, 96}, {65, 64}, {130, 256}};
    for (const auto& s : shapes)
        for (const char* profile : {"uniform", "ties", "zeros", "tiny", "nonfinite"}) {
            const auto x = gen(s.n, s.d, profile);
            const Plane m = model(x, s.n, s.d);
            EXPECT_TRUE(kernel<2>(x, s.n, s.d) == m) << "2 lanes, " << s.n << " x " << s.d << " " << profile;
            EXPECT_TRUE(kernel<4>(x, s.n, s.d) == m) << "4 lanes, " << s.n << " x " << s.d << " " << profile;
        }
}

TEST(QuantizePad40Sim, AValueTheModelDidNotSeeChangesTheBytes) {
    // The comparison above can fail: the kernel given x with one value moved by 0.5 (in token 64, the
    // second token block, chunk 2) against the model of the original x differs in that token's
    // sector of chunk 2 and nowhere else.
    const int64_t n = 65, d = 96;
    const auto x = gen(n, d, "uniform");
    auto x2 = x;
    x2[size_t(64 * d + 2 * 32 + 5)] += 0.5f;
    const Plane b = model(x, n, d);
    for (const Plane& a : {kernel<2>(x2, n, d), kernel<4>(x2, n, d)}) {
        EXPECT_FALSE(a == b);
        for (size_t i = 0; i < a.qs.size(); ++i) {
            const int64_t tile = int64_t(i / kPad40TileBytes);
            const auto where = pad40_qs_where(uint32_t(i % kPad40TileBytes));
            const bool changed_chunk = tile == 1 * pad40_nchunk(d) + 2 && where.r == 0;
            if (!changed_chunk) {
                ASSERT_EQ(a.qs[i], b.qs[i]) << "byte " << i;
            }
        }
    }
}
