#include "mmq_q8_0.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "bitgate/f16.hpp"
#include "bitgate/inputs.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::ref {

namespace {

// The plane and the weights unpacked to plain row-major int8, with the scales transposed to
// [chunk][token] and [chunk][row]; token and row counts padded to multiples of 4 with zero rows
// (computed, never stored).
struct Operands {
    int64_t K = 0, nchunk = 0, n4 = 0, N4 = 0;
    std::vector<int8_t> a;        // [n4][K]
    std::vector<float> da, nmda;  // [nchunk][n4]: d and -kMagic * d of the activation
    std::vector<int8_t> w;        // [N4][K]
    std::vector<float> dw;        // [nchunk][N4]
};

Operands unpack(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, int64_t n, int64_t N, int64_t K) {
    Operands o;
    o.K = K;
    o.nchunk = K / QK8_0;
    o.n4 = (n + 3) / 4 * 4;
    o.N4 = (N + 3) / 4 * 4;
    o.a.assign(size_t(o.n4 * K), 0);
    o.da.assign(size_t(o.n4 * o.nchunk), 0.0f);
    o.nmda.assign(size_t(o.n4 * o.nchunk), 0.0f);
    for (int64_t t = 0; t < n; ++t) {
        const int64_t tb = t / kPad40Tokens, r = t % kPad40Tokens;
        for (int64_t c = 0; c < o.nchunk; ++c) {
            const size_t tile = size_t(tb * o.nchunk + c);
            for (uint32_t u = 0; u < 8; ++u)
                std::memcpy(&o.a[size_t(t * K + c * QK8_0 + u * 4)],
                            qs + tile * kPad40TileBytes + pad40_qs_offset(uint32_t(r), u), 4);
            const float d = f16_to_f32(uint16_t(sda[tile * kPad40Tokens + size_t(r)] & 0xffffu));
            o.da[size_t(c * o.n4 + t)] = d;
            o.nmda[size_t(c * o.n4 + t)] = mmq::neg_magic_times(d);
        }
    }
    o.w.assign(size_t(o.N4 * K), 0);
    o.dw.assign(size_t(o.N4 * o.nchunk), 0.0f);
    for (int64_t r = 0; r < N; ++r)
        for (int64_t c = 0; c < o.nchunk; ++c) {
            const BlockQ8_0& b = w[r * o.nchunk + c];
            std::memcpy(&o.w[size_t(r * K + c * QK8_0)], b.qs, QK8_0);
            o.dw[size_t(c * o.N4 + r)] = f16_to_f32(b.d);
        }
    return o;
}

// One 4 x 4 block of (token, row) pairs over all chunks, in plain C++: the definition.
void quad_scalar(const Operands& o, int64_t t0, int64_t r0, float* C, int64_t n, int64_t N, MmqOrder order) {
    const int64_t K = o.K, nc = o.nchunk;
    float acc[4][4] = {}, part[4][4] = {};
    for (int64_t c = 0; c < nc; ++c) {
        const bool stage_end = c % 4 == 3 || c == nc - 1;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) {
                const int8_t* a = &o.a[size_t((t0 + i) * K + c * QK8_0)];
                const int8_t* b = &o.w[size_t((r0 + j) * K + c * QK8_0)];
                int32_t sumi = 0;
                for (int k = 0; k < QK8_0; ++k) sumi += int32_t(a[k]) * int32_t(b[k]);
                // kMagic + sumi is exact (|sumi| <= 2^19): the float the kernel reads from the
                // MMA's biased int32 result.
                const float term = mmq::chunk_term(float(sumi) + mmq::kMagic, o.da[size_t(c * o.n4 + t0 + i)],
                                                   o.nmda[size_t(c * o.n4 + t0 + i)]);
                const float dw = o.dw[size_t(c * o.N4 + r0 + j)];
                if (order == MmqOrder::ascending) {
                    acc[i][j] = mmq::chunk_accumulate(term, dw, acc[i][j]);
                } else {
                    part[i][j] = mmq::chunk_accumulate(term, dw, part[i][j]);
                    if (stage_end) {
                        acc[i][j] = acc[i][j] + part[i][j];
                        part[i][j] = 0.0f;
                    }
                }
            }
    }
    for (int i = 0; i < 4 && t0 + i < n; ++i)
        for (int j = 0; j < 4 && r0 + j < N; ++j) C[(t0 + i) * N + r0 + j] = acc[i][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same block with AVX2: the integer sums are exact in any order, int32 -> float of
// |sumi| <= 2^19 and kMagic + that are exact, and each fma is correctly rounded, so every lane
// computes exactly the scalar definition's operations (the tests compare the two byte for byte).
__attribute__((target("avx2,fma"))) void quad_avx2(const Operands& o, int64_t t0, int64_t r0, float* C, int64_t n,
                                                   int64_t N, MmqOrder order) {
    const int64_t K = o.K, nc = o.nchunk;
    const __m256i lo_tok = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const __m256i hi_tok = _mm256_setr_epi32(2, 2, 2, 2, 3, 3, 3, 3);
    const __m256 magic = _mm256_set1_ps(mmq::kMagic);
    // Lanes are (token i, row j), i-major: acc01 holds tokens 0 and 1, acc23 tokens 2 and 3.
    __m256 acc01 = _mm256_setzero_ps(), acc23 = _mm256_setzero_ps();
    __m256 part01 = _mm256_setzero_ps(), part23 = _mm256_setzero_ps();
    for (int64_t c = 0; c < nc; ++c) {
        __m256i a16[4][2], w16[4][2];
        for (int i = 0; i < 4; ++i) {
            const int8_t* a = &o.a[size_t((t0 + i) * K + c * QK8_0)];
            const int8_t* b = &o.w[size_t((r0 + i) * K + c * QK8_0)];
            a16[i][0] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
            a16[i][1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16)));
            w16[i][0] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
            w16[i][1] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16)));
        }
        __m256i h[4];  // h[i]: per 128-bit half, the partial sums of (i, 0..3)
        for (int i = 0; i < 4; ++i) {
            __m256i d[4];
            for (int j = 0; j < 4; ++j)
                d[j] = _mm256_add_epi32(_mm256_madd_epi16(a16[i][0], w16[j][0]), _mm256_madd_epi16(a16[i][1], w16[j][1]));
            h[i] = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]), _mm256_hadd_epi32(d[2], d[3]));
        }
        const __m256i s01 = _mm256_add_epi32(_mm256_permute2x128_si256(h[0], h[1], 0x20),
                                             _mm256_permute2x128_si256(h[0], h[1], 0x31));
        const __m256i s23 = _mm256_add_epi32(_mm256_permute2x128_si256(h[2], h[3], 0x20),
                                             _mm256_permute2x128_si256(h[2], h[3], 0x31));
        const __m256 da4 = _mm256_castps128_ps256(_mm_loadu_ps(&o.da[size_t(c * o.n4 + t0)]));
        const __m256 nm4 = _mm256_castps128_ps256(_mm_loadu_ps(&o.nmda[size_t(c * o.n4 + t0)]));
        const __m256 dw = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(&o.dw[size_t(c * o.N4 + r0)]));
        const __m256 term01 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_cvtepi32_ps(s01), magic),
                                              _mm256_permutevar8x32_ps(da4, lo_tok), _mm256_permutevar8x32_ps(nm4, lo_tok));
        const __m256 term23 = _mm256_fmadd_ps(_mm256_add_ps(_mm256_cvtepi32_ps(s23), magic),
                                              _mm256_permutevar8x32_ps(da4, hi_tok), _mm256_permutevar8x32_ps(nm4, hi_tok));
        if (order == MmqOrder::ascending) {
            acc01 = _mm256_fmadd_ps(term01, dw, acc01);
            acc23 = _mm256_fmadd_ps(term23, dw, acc23);
        } else {
            part01 = _mm256_fmadd_ps(term01, dw, part01);
            part23 = _mm256_fmadd_ps(term23, dw, part23);
            if (c % 4 == 3 || c == nc - 1) {
                acc01 = _mm256_add_ps(acc01, part01);
                acc23 = _mm256_add_ps(acc23, part23);
                part01 = part23 = _mm256_setzero_ps();
            }
        }
    }
    alignas(32) float out[16];
    _mm256_store_ps(out, acc01);
    _mm256_store_ps(out + 8, acc23);
    for (int i = 0; i < 4 && t0 + i < n; ++i)
        for (int j = 0; j < 4 && r0 + j < N; ++j) C[(t0 + i) * N + r0 + j] = out[i * 4 + j];
}

bool have_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

}  // namespace

void mmq_q8_0(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N,
              int64_t K, MmqOrder order, MmqPath path) {
    const Operands o = unpack(qs, sda, w, n, N, K);
    auto quad = quad_scalar;
#if defined(__x86_64__) && defined(__GNUC__)
    if (path == MmqPath::fastest && have_avx2()) quad = quad_avx2;
#endif
    // 32 tokens at a time against 4 rows at a time: the 4 weight rows stay in L1 while the
    // token group's rows stay in L2. Groups write disjoint outputs, so threads change nothing
    // but the time.
    constexpr int64_t kGroup = 32;
    const int64_t groups = (o.n4 + kGroup - 1) / kGroup;
    std::atomic<int64_t> next{0};
    auto work = [&] {
        for (int64_t gi = next++; gi < groups; gi = next++) {
            const int64_t g0 = gi * kGroup;
            for (int64_t r0 = 0; r0 < o.N4; r0 += 4)
                for (int64_t t0 = g0; t0 < std::min(g0 + kGroup, o.n4); t0 += 4) quad(o, t0, r0, C, n, N, order);
        }
    };
    const double macs = double(n) * double(N) * double(K);
    const int64_t threads = macs < 5e7 ? 1 : std::min<int64_t>({int64_t(std::max(1u, std::thread::hardware_concurrency())), 16, groups});
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& th : pool) th.join();
}

// ---------------------------------------------------------------------------------------------
// Inputs: a valid plane, generated directly.

namespace {

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

}  // namespace

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

}  // namespace bitgate::ref

// ---------------------------------------------------------------------------------------------
// The family.

namespace {

using namespace bitgate;

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
    ref::mmq_q8_0(io.input<uint8_t>(0), io.input<uint32_t>(1), io.input<BlockQ8_0>(2), io.output<float>(0), s["n"],
                  s["N"], s["K"]);
}

VariantSpec tiling(std::string name, std::string summary) {
    return VariantSpec{.name = std::move(name), .summary = std::move(summary), .model = model, .claim = "mmq_q8_0"};
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
                 .generate = ref::fill_plane_qs, .decode = decode_qs},
                {.name = "sda", .role = Role::input, .elem = Elem::u32,
                 .bytes = [](const Shape& s) { return size_t(ntb_of(s) * nchunk_of(s)) * 64 * 4; },
                 .generate = ref::fill_plane_sda, .decode = decode_sda},
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
                tiling("mma", "int8 mma.sync m16n8k32, tiling chosen by shape (128x128, 64x128 or 64x64 tokens x rows)"),
                tiling("t128x128", "128 tokens x 128 rows per CTA, 8 warps of 64x32"),
                tiling("t64x128", "64 tokens x 128 rows per CTA, 4 warps of 64x32"),
                tiling("t64x64", "64 tokens x 64 rows per CTA, 4 warps of 32x32"),
                tiling("wgmma", "sm_90a warpgroup MMA (wgmma m64n64k32 per 64-row half, epilogue overlapped), 128 "
                                "tokens x 128 rows per CTA, bulk copies on mbarriers; device launcher only where the "
                                "sm_90a kernels are built"),
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
