// The mmq_q8_0 family: the prefill int8 GEMM against the quantize_pad40_t plane.
#include <cstring>
#include <string>

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/pad40.hpp"
#include "bitgate/spec.hpp"
#include "mmq_q8_0.cuh"
#include "mmq_q8_0.hpp"
#include "sm90a/mmq_q8_0_wgmma.cuh"

namespace {

using namespace bitgate;

// ---------------------------------------------------------------------------------------------
// Inputs: a valid plane, generated directly. A plane for n tokens of K channels: random q per
// real token (profile-dependent), f16 d, ssum consistent with q, zeros in both planes for tokens
// n .. 64*ceil(n/64)-1; pure functions of (seed, profile, shape, byte position).

struct PlaneGen {
    inputs::Stream s;
    std::string_view profile;
    int64_t nchunk;
    explicit PlaneGen(const Shape& sh, const GenRequest& r)
        // q and d come from one stream whatever tensor is being filled, so qs and sda agree.
        : s(GenRequest{.seed = r.seed, .profile = r.profile, .tensor = "mmq_plane"}),
          profile(r.profile),
          nchunk(sh["K"] / QK8_0) {}

    bool zero_chunk(int64_t t, int64_t c) const {
        return profile == "zeros" && s.bits(uint64_t(t * nchunk + c), 1) % 4 == 0;
    }
    int8_t q(int64_t t, int64_t c, int k) const {
        if (zero_chunk(t, c)) return 0;
        const uint64_t b = s.bits(uint64_t((t * nchunk + c) * QK8_0 + k));
        if (profile == "extreme") {  // the largest |sumi|: -128 * -128 * 32 = 2^19
            const int v[3] = {-128, -127, 127};
            return int8_t(v[b % 3]);
        }
        return int8_t(int(b % 255) - 127);
    }
    uint16_t d(int64_t t, int64_t c) const {
        if (zero_chunk(t, c)) return 0;
        const uint64_t h = s.bits(uint64_t(t * nchunk + c), 2);
        if (profile == "tiny") return uint16_t(1 + h % 0x3ff);  // f16 subnormals
        // 2^-9 .. 2^-5 with 10 random mantissa bits: am / 127 for activations of order 0.1 .. 4
        return uint16_t(((6 + h % 5) << 10) | ((h >> 8) & 0x3ffu));
    }
};


void fill_plane_qs(const Shape& sh, const GenRequest& r, std::span<uint8_t> out) {
    const PlaneGen g(sh, r);
    const int64_t n = sh["n"], ntb = (n + 63) / 64;
    std::fill(out.begin(), out.end(), uint8_t(0));
    for (int64_t tb = 0; tb < ntb; ++tb)
        for (int64_t c = 0; c < g.nchunk; ++c)
            for (uint32_t rr = 0; rr < 64; ++rr) {
                const int64_t t = tb * 64 + rr;
                if (t >= n) continue;
                uint8_t* tile = out.data() + size_t(tb * g.nchunk + c) * kPad40TileBytes;
                for (uint32_t u = 0; u < 8; ++u)
                    for (int b = 0; b < 4; ++b)
                        tile[pad40_qs_offset(rr, u) + uint32_t(b)] = uint8_t(g.q(t, c, int(u * 4) + b));
            }
}

void fill_plane_sda(const Shape& sh, const GenRequest& r, std::span<uint8_t> out) {
    const PlaneGen g(sh, r);
    const int64_t n = sh["n"], ntb = (n + 63) / 64;
    for (int64_t tb = 0; tb < ntb; ++tb)
        for (int64_t c = 0; c < g.nchunk; ++c)
            for (int64_t rr = 0; rr < 64; ++rr) {
                const int64_t t = tb * 64 + rr;
                uint32_t v = 0;
                if (t < n) {
                    int ssum = 0;
                    for (int k = 0; k < QK8_0; ++k) ssum += g.q(t, c, k);
                    v = uint32_t(g.d(t, c)) | (uint32_t(uint16_t(int16_t(ssum))) << 16);
                }
                std::memcpy(out.data() + size_t((tb * g.nchunk + c) * 64 + rr) * 4, &v, 4);
            }
}


// ---------------------------------------------------------------------------------------------
// The family.

int64_t ntb_of(const Shape& s) { return (s["n"] + 63) / 64; }
int64_t nchunk_of(const Shape& s) { return s["K"] / QK8_0; }

std::string decode_qs(const Shape& s, size_t off) {
    const size_t nc = size_t(nchunk_of(s)), tile = off / kPad40TileBytes;
    const Pad40Where w = pad40_qs_where(uint32_t(off % kPad40TileBytes));
    return "token block " + std::to_string(tile / nc) + " chunk " + std::to_string(tile % nc) + " token " +
           std::to_string((tile / nc) * kPad40Tokens + w.r) + " word " + std::to_string(w.u) + " byte " + std::to_string(w.j);
}

std::string decode_sda(const Shape& s, size_t off) {
    const int64_t nc = nchunk_of(s);
    const size_t e = off / 4, tile = e / 64;
    return "token block " + std::to_string(tile / size_t(nc)) + " chunk " + std::to_string(tile % size_t(nc)) +
           " token " + std::to_string((tile / size_t(nc)) * 64 + e % 64) + ((off % 4) < 2 ? " d" : " ssum");
}

std::string decode_w(const Shape& s, size_t off) {
    const size_t b = off / sizeof(BlockQ8_0), in = off % sizeof(BlockQ8_0);
    const size_t nc = size_t(nchunk_of(s));
    return "row " + std::to_string(b / nc) + " block " + std::to_string(b % nc) +
           (in < 2 ? " d byte " + std::to_string(in) : " qs[" + std::to_string(in - 2) + "]");
}

std::string decode_c(const Shape& s, size_t off) {
    const size_t e = off / 4, N = size_t(s["N"]);
    return "token " + std::to_string(e / N) + " row " + std::to_string(e % N);
}

void model(const Shape& s, const HostIo& io) {
    ref::mmq_q8_0(io.input<uint8_t>("qs"), io.input<uint32_t>("sda"), io.input<BlockQ8_0>("w"), io.output<float>("C"),
                  s["n"], s["N"], s["K"]);
}

#if defined(BITGATE_HAVE_CUDA)
DeviceLauncher launcher(cuda::MmqTiling tiling) {
    return [tiling](const Shape& s, const DeviceIo& io) {
        cuda::mmq_q8_0(io.input<uint8_t>("qs"), io.input<uint32_t>("sda"), io.input<BlockQ8_0>("w"),
                       io.output<float>("C"), s["n"], s["N"], s["K"], tiling, static_cast<cudaStream_t>(io.stream));
        return 1;
    };
}
#endif

VariantSpec tiling(std::string name, std::string summary, [[maybe_unused]] cuda::MmqTiling t) {
    return VariantSpec{.name = std::move(name), .summary = std::move(summary), .model = model, .claim = "mmq_q8_0",
                       .launch = BITGATE_ON_DEVICE(launcher(t))};
}

// The Hopper variant: its kernel is compiled for sm_90a only (cmake/sm90a.cmake, which defines
// BITGATE_HAVE_SM90A where it does); elsewhere, CUDA builds included, it has no launcher and the
// engine skips its device checks with that reason. Same model and claim as the mma tilings.
DeviceLauncher wgmma_launcher() {
#if defined(BITGATE_HAVE_SM90A)
    return [](const Shape& s, const DeviceIo& io) {
        cuda::mmq_q8_0_wgmma(io.input<uint8_t>("qs"), io.input<uint32_t>("sda"), io.input<BlockQ8_0>("w"),
                             io.output<float>("C"), s["n"], s["N"], s["K"], /*overlap=*/true,
                             static_cast<cudaStream_t>(io.stream));
        return 1;
    };
#else
    return nullptr;
#endif
}

FamilySpec spec() {
    return FamilySpec{
        .name = "mmq_q8_0",
        .summary = "prefill int8 GEMM: Q8_0 weights [N][K] x quantize_pad40_t plane of n tokens -> f32 [n][N]",
        .dims =
            {
                {.name = "n", .lo = 1, .hi = 600, .edges = {1, 2, 63, 64, 65, 127, 128, 129, 191, 192, 193, 257},
                 .doc = "tokens (ragged: the plane pads to 64, C holds n rows)"},
                {.name = "N", .lo = 1, .hi = 1100,
                 .edges = {1, 2, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257, 383, 384, 385},
                 .doc = "weight rows = output columns (ragged against the 64/128-row tiles)"},
                {.name = "K", .lo = 32, .hi = 2048, .multiple = 32,
                 .edges = {32, 64, 96, 128, 160, 192, 224, 288, 896, 928},
                 .doc = "channels, a multiple of 32 (odd K/32 takes the 2-byte weight copy)"},
            },
        .valid = [](const Shape& s) -> std::string {
            if (s["n"] < 1) return "n must be at least 1";
            if (s["N"] < 1) return "N must be at least 1";
            if (s["K"] < QK8_0 || s["K"] % QK8_0 != 0) return "K must be a positive multiple of 32";
            return "";
        },
        .tensors =
            {
                {.name = "qs", .role = Role::input, .elem = Elem::i8,
                 .bytes = [](const Shape& s) { return size_t(ntb_of(s) * nchunk_of(s)) * kPad40TileBytes; },
                 .generate = fill_plane_qs, .decode = decode_qs},
                {.name = "sda", .role = Role::input, .elem = Elem::u32,
                 .bytes = [](const Shape& s) { return size_t(ntb_of(s) * nchunk_of(s)) * 64 * 4; },
                 .generate = fill_plane_sda, .decode = decode_sda},
                {.name = "w", .role = Role::input, .elem = Elem::q8_0,
                 .bytes = [](const Shape& s) { return size_t(s["N"] * nchunk_of(s)) * sizeof(BlockQ8_0); },
                 .generate = [](const Shape&, const GenRequest& r, std::span<uint8_t> out) { inputs::fill_q8_0(out, r); },
                 .decode = decode_w},
                {.name = "C", .role = Role::output, .elem = Elem::f32,
                 .bytes = [](const Shape& s) { return size_t(s["n"] * s["N"]) * 4; },
                 .decode = decode_c},
            },
        .profiles = {"uniform", "zeros", "raw_q8", "extreme", "tiny"},
        .variants =
            {
                tiling("mma", "int8 mma.sync m16n8k32, tiling chosen by shape (128x128, 64x128 or 64x64 tokens x rows)",
                       cuda::MmqTiling::mma),
                tiling("dispatch",
                       "what the forward calls (automatic): wgmma on sm_90a where the shape gives half the card a "
                       "128x128 CTA and fills 2/3 of its waves (else t64x64), else mma",
                       cuda::MmqTiling::automatic),
                tiling("t128x128", "128 tokens x 128 rows per CTA, 8 warps of 64x32", cuda::MmqTiling::t128x128),
                tiling("t64x128", "64 tokens x 128 rows per CTA, 4 warps of 64x32", cuda::MmqTiling::t64x128),
                tiling("t64x64", "64 tokens x 64 rows per CTA, 4 warps of 32x32", cuda::MmqTiling::t64x64),
                VariantSpec{.name = "wgmma",
                            .summary = "sm_90a warpgroup MMA (wgmma m64n64k32 per 64-row half, epilogue overlapped), "
                                       "128 tokens x 128 rows per CTA, copies on mbarriers; device launcher only "
                                       "where the sm_90a kernels are built",
                            .model = model, .claim = "mmq_q8_0", .launch = wgmma_launcher()},
            },
        .bytes_moved = [](const Shape& s) {
            return double(ntb_of(s) * nchunk_of(s)) * (kPad40TileBytes + 256) +
                   double(s["N"] * nchunk_of(s)) * sizeof(BlockQ8_0) + double(s["n"] * s["N"]) * 4;
        },
        .ops = [](const Shape& s) { return 2.0 * double(s["n"]) * double(s["N"]) * double(s["K"]); },
        .ops_unit = "TOPS",
    };
}

BITGATE_FAMILY(spec());

}  // namespace
