// mmq_q8_0: the kernel template, shared by the launchers (kernels/mmq_q8_0.cu) and the
// deliberately defective ones (mutants/mmq_q8_0.cu).
//
// C[t][r] = the chunk-ordered epilogue of bitgate/mmq_epilogue.hpp over the exact int32 sums
// sum_k qa[t][c][k] * qw[r][c][k], one 32-k chunk c at a time, c ascending, no split over K: every
// tiling below adds the same terms in the same order, so all of them give the same bytes.
//
// A CTA owns BM = 64*TB tokens (TB token blocks of the plane) x BN weight rows and walks K in
// stages of KC chunks through a STAGES-deep cp.async ring:
//   * A (activations): per token block the stage's qs tiles are KC*2048 contiguous bytes and the
//     sda words KC*256 contiguous bytes: a bulk 16-byte copy. Fragments are read straight from
//     the plane's swizzled layout (conflict-free, see load_a below).
//   * B (weights): each row's KC blocks are KC*34 contiguous bytes, copied raw with the widest
//     cp.async the alignment of w, K/32*34 and KC*34 allows (16/8/4 bytes; 2 bytes -> plain
//     loads). Block j's qs sit at 34j + 2, so fragments of even blocks are rebuilt from aligned
//     words with a funnel shift (load_b).
//   * Scales: one pass per stage turns f16 d of both sides into f32 in fragment order, one
//     stage ahead of the MMAs, into a double buffer; that keeps one __syncthreads per stage.
// The MMA is mma.sync m16n8k32 s8 x s8 -> s32, accumulating onto kMagicBits (see
// mmq_epilogue.hpp), so the float epilogue per chunk is two fmaf per output element.
//
// K is permuted inside a chunk, identically for A and B (harmless: the int32 sum is exact): MMA
// k-word t (t < 4) is physical word 2t and k-word t + 4 is physical word 2t + 1, so each lane
// reads 8 contiguous bytes per token and per weight row.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "bitgate/formats.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"

namespace bitgate::cuda::mmq_impl {

// Test-only defects for the mutants; `none` is the kernel.
enum class Defect {
    none,
    writes_padded_token,  // off by one: also stores token n (the first padded token)
    writes_past_n,        // the ragged N tile stores up to its full width
    chunk_order,          // chunks of a stage in descending order: another float order
    no_cp_async_wait,     // consumes stages without waiting for their copies
    add_first,            // the epilogue's addend seeds the accumulator instead of following the sum
};

// Weight row pitch in the raw stage: room for KC blocks, and 32 or 96 mod 128 bytes so that a
// fragment load (8 rows x 4 lanes x 8 bytes) hits 32 distinct banks per half-warp.
constexpr int weight_pitch(int bytes) {
    int p = (bytes + 31) / 32 * 32;
    while (p % 128 != 32 && p % 128 != 96) p += 32;
    return p;
}

template <int TB_, int WARPS_M_, int WARPS_N_, int MT_, int NT_, int KC_, int STAGES_, int MIN_CTAS_>
struct Tiling {
    static constexpr int TB = TB_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, MT = MT_, NT = NT_, KC = KC_,
                         STAGES = STAGES_, MIN_CTAS = MIN_CTAS_;
    static constexpr int BM = 64 * TB, WM = 16 * MT, WN = 8 * NT, BN = WARPS_N * WN;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static_assert(WARPS_M * WM == BM, "warps must cover the CTA's tokens");
    static_assert(64 % WM == 0, "a warp's tokens must sit in one token block");
    static_assert(NT % 2 == 0, "row scales are read two n-tiles at a time");
    static_assert(STAGES >= 3, "scales are converted one stage ahead of the copies being waited on");
    static constexpr int P = weight_pitch(KC * 34);
    static constexpr int A_QS = TB * KC * kPad40TileBytes;
    static constexpr int A_SDA = TB * KC * 64 * 4;
    static constexpr int B_RAW = BN * P;
    static constexpr int STAGE = A_QS + A_SDA + B_RAW;
    static constexpr int SC_A = KC * BM * 4;  // da per (chunk, token)
    static constexpr int SC_B = KC * BN * 4;  // dw per (chunk, row)
    static constexpr int SC = SC_A + SC_B;
    static constexpr int SMEM = STAGES * STAGE + 2 * SC;
    static_assert(STAGE % 16 == 0 && SC_A % 16 == 0 && SC % 16 == 0, "16-byte aligned smem regions");
};

struct Params {
    const uint8_t* qs;
    const uint32_t* sda;
    const uint8_t* w;  // BlockQ8_0 [N][nchunk], as bytes
    float* C;
    int n, N, nchunk, ntb;
    int m_tiles, n_tiles;
    int vec_store;  // N even and C 8-byte aligned: pairs of columns as one float2
    // The epilogue (family mmq_q8_0_add): C[t][r] = sum + bias[r], then + res[t][r], each one
    // __fadd_rn after the whole sum; either may be null. res may be C itself (the residual stream,
    // updated in place: each element is read and then written by the one thread that owns it).
    const float* bias;
    const float* res;
};

// ---- PTX ------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

// Copies src_bytes (<= G) and zero-fills the rest of the G-byte unit.
template <int G>
__device__ __forceinline__ void cp_async_full(uint32_t dst, const void* src) {
    if constexpr (G == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(G) : "memory");
}

template <int G>
__device__ __forceinline__ void cp_async_n(uint32_t dst, const void* src, int src_bytes) {
    if constexpr (G == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(G), "r"(src_bytes)
                     : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// D = A * B + C over int8, int32 accumulation (exact).
__device__ __forceinline__ void mma_s8(int32_t (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                       uint32_t b0, uint32_t b1, int32_t c) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %10, %10, %10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c));
}

// ---- fragments ------------------------------------------------------------------------------

// Physical qs words 2t and 2t + 1 of weight block j of a row: p points at the block's first
// byte plus 8t, so the wanted bytes are p + 2 .. p + 9. Rows start 32-byte aligned, so the
// alignment of p + 2 depends on j alone: 8 (j = 3 mod 4), 4 (j = 1 mod 4), 2 (j even).
template <int J>
__device__ __forceinline__ void load_b(const uint8_t* p, uint32_t& b0, uint32_t& b1) {
    if constexpr (J % 4 == 3) {
        const uint2 v = *reinterpret_cast<const uint2*>(p + 2);
        b0 = v.x;
        b1 = v.y;
    } else if constexpr (J % 4 == 1) {
        b0 = *reinterpret_cast<const uint32_t*>(p + 2);
        b1 = *reinterpret_cast<const uint32_t*>(p + 6);
    } else {
        uint32_t w0, w1;
        if constexpr (J % 4 == 0) {
            const uint2 v = *reinterpret_cast<const uint2*>(p);
            w0 = v.x;
            w1 = v.y;
        } else {
            w0 = *reinterpret_cast<const uint32_t*>(p);
            w1 = *reinterpret_cast<const uint32_t*>(p + 4);
        }
        const uint32_t w2 = *reinterpret_cast<const uint32_t*>(p + 8);
        b0 = __funnelshift_r(w0, w1, 16);
        b1 = __funnelshift_r(w1, w2, 16);
    }
}

__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// ---- the kernel -----------------------------------------------------------------------------

template <class T, int G, Defect D>
__global__ void __launch_bounds__(T::THREADS, T::MIN_CTAS) mmq_q8_0_kernel(const Params p) {
    extern __shared__ __align__(16) uint8_t smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm = warp / T::WARPS_N, wn = warp % T::WARPS_N;

    // Raster: groups of 8 token tiles walk the row tiles together, so a wave of CTAs shares
    // its weights and activations in L2.
    constexpr int kGroup = 8;
    int mt, nt;
    {
        const int per_group = kGroup * p.n_tiles;
        const int bid = blockIdx.x, first = bid / per_group * kGroup;
        const int size = min(p.m_tiles - first, kGroup);
        mt = first + (bid % per_group) % size;
        nt = (bid % per_group) / size;
    }
    const int row0 = nt * T::BN;
    const int nk = (p.nchunk + T::KC - 1) / T::KC;
    if (p.res) {  // the epilogue's residual tile on its way to L2 while the GEMM runs (moves no bit)
        constexpr int kLines = T::BN / 32;  // 128-byte lines of a token's row segment
        const int rows = min(T::BM, p.n - mt * T::BM), cols = min(T::BN, p.N - row0);
        for (int i = tid; i < rows * kLines; i += T::THREADS)
            if ((i % kLines) * 32 < cols)
                prefetch_l2(p.res + size_t(mt * T::BM + i / kLines) * size_t(p.N) + row0 + (i % kLines) * 32);
    }

    // Per-lane byte offsets inside a stage: A fragment rows (tokens g and g + 8 of each m-tile,
    // physical words 2t, 2t + 1) and B fragment rows (row g of each n-tile, plus 8t).
    // Token r = wm*WM + 16mi + 8h + g: its 4-token group (r % 64) / 4 = 4*(m16 + mi) + 2h + g/4,
    // m16 = (wm*WM % 64) / 16 even, so the group's swizzle (group & 7) = 4*(mi & 1) + 2h + g/4 and
    // the offset is a per-warp base + constants + one of four lane values (a_lane[h + 2*(mi & 1)]).
    const uint32_t a_base = uint32_t((wm * T::WM / 64) * T::KC * kPad40TileBytes + (wm * T::WM % 64) / 16 * 512);
    uint32_t a_lane[4];
#pragma unroll
    for (int x = 0; x < 4; ++x)
        a_lane[x] = pad40_qs_offset(uint32_t(4 * (x / 2) + 2 * (x % 2)) * 4 + uint32_t(g), uint32_t(2 * t)) -
                    uint32_t((4 * (x / 2) + 2 * (x % 2)) * 128);
    auto a_off = [&](int mi, int h) { return a_base + uint32_t(mi * 512 + h * 256) + a_lane[h + 2 * (mi & 1)]; };
    const uint32_t b_base = uint32_t(T::A_QS + T::A_SDA + (wn * T::WN + g) * T::P + 8 * t);

    auto chunks_in = [&](int s) { return min(T::KC, p.nchunk - s * T::KC); };

    const uint32_t smem0 = smem_addr(smem);
    const uint32_t row_bytes = uint32_t(p.nchunk) * 34u;  // < 2^32 for any K a plane can hold

    // Enqueue the copies of stage s into ring slot s % STAGES. Item index math depends only on
    // tid and compile-time constants; the stage moves the sources by c0 and the slot.
    auto issue = [&](int s) {
        const int c0 = s * T::KC, kcv = chunks_in(s);
        const uint32_t slot = smem0 + uint32_t((s % T::STAGES) * T::STAGE);
#pragma unroll
        for (int tb = 0; tb < T::TB; ++tb) {
            const int gtb = mt * T::TB + tb;
            if (gtb >= p.ntb) continue;  // past the plane: never stored
            const size_t tile = size_t(gtb) * size_t(p.nchunk) + size_t(c0);
            const uint8_t* src = p.qs + tile * kPad40TileBytes;
            const uint32_t dst = slot + uint32_t(tb * T::KC * kPad40TileBytes);
            // kcv*2048 qs bytes and kcv*256 sda bytes, contiguous, in 16-byte units
            const uint8_t* ssrc = reinterpret_cast<const uint8_t*>(p.sda + tile * 64);
            const uint32_t sdst = slot + uint32_t(T::A_QS + tb * T::KC * 256);
            if (kcv == T::KC) {
                constexpr int QU = T::KC * kPad40TileBytes / 16, SU = T::KC * 16;
#pragma unroll
                for (int k = 0; k < (QU + T::THREADS - 1) / T::THREADS; ++k) {
                    const int u = tid + k * T::THREADS;
                    if (QU % T::THREADS == 0 || u < QU) cp_async_16(dst + u * 16, src + u * 16);
                }
#pragma unroll
                for (int k = 0; k < (SU + T::THREADS - 1) / T::THREADS; ++k) {
                    const int u = tid + k * T::THREADS;
                    if (SU % T::THREADS == 0 || u < SU) cp_async_16(sdst + u * 16, ssrc + u * 16);
                }
            } else {
                for (int u = tid; u < kcv * (kPad40TileBytes / 16); u += T::THREADS) cp_async_16(dst + u * 16, src + u * 16);
                for (int u = tid; u < kcv * 16; u += T::THREADS) cp_async_16(sdst + u * 16, ssrc + u * 16);
            }
        }
        // Weights: BN rows x (kcv*34) bytes. LPR lanes per row, consecutive units: a warp
        // instruction covers 8 row segments of 4*GU contiguous bytes, and a lane's units of a
        // row are constant offsets from one base pointer.
        const int bytes = kcv * 34;
        const uint8_t* wsrc = p.w + size_t(row0) * row_bytes + size_t(c0) * 34;
        const uint32_t bdst = slot + uint32_t(T::A_QS + T::A_SDA);
        constexpr int GU = G >= 4 ? G : 2;
        constexpr int NU = (T::KC * 34) / GU;  // GU divides KC*34 (weight_copy_bytes)
        constexpr int LPR = 4, RPP = T::THREADS / LPR, UPL = (NU + LPR - 1) / LPR;
        static_assert(T::BN % RPP == 0, "whole passes of rows");
        const int lu = tid % LPR;
        if (kcv == T::KC) {  // every stage but possibly the last
#pragma unroll
            for (int pass = 0; pass < T::BN / RPP; ++pass) {
                const int rr = tid / LPR + pass * RPP;
                if (row0 + rr >= p.N) continue;
                const uint8_t* src = wsrc + size_t(uint32_t(rr) * row_bytes) + lu * GU;
                const uint32_t dst = bdst + uint32_t(rr * T::P + lu * GU);
#pragma unroll
                for (int k = 0; k < UPL; ++k) {
                    if (NU % LPR != 0 && k == UPL - 1 && lu + k * LPR >= NU) continue;
                    const int off = k * LPR * GU;
                    if constexpr (G >= 4) {
                        cp_async_full<G>(dst + off, src + off);
                    } else {  // rows only 2-byte aligned (odd K/32): plain loads, visible after the barrier
                        *reinterpret_cast<uint16_t*>(smem + (dst + off - smem0)) =
                            *reinterpret_cast<const uint16_t*>(src + off);
                    }
                }
            }
        } else {  // the ragged last stage: kcv*34 bytes per row, the last unit zero-filled past them
            for (int i = tid; i < T::BN * NU; i += T::THREADS) {
                const int rr = i / NU, off = (i % NU) * GU;
                if (row0 + rr >= p.N || off >= bytes) continue;
                const uint8_t* src = wsrc + size_t(uint32_t(rr) * row_bytes) + off;
                const uint32_t dst = bdst + uint32_t(rr * T::P + off);
                if constexpr (G >= 4)
                    cp_async_n<G>(dst, src, min(G, bytes - off));
                else
                    *reinterpret_cast<uint16_t*>(smem + (dst - smem0)) = *reinterpret_cast<const uint16_t*>(src);
            }
        }
    };

    // Scale items of this thread, fixed for the whole K loop: item k of each side is
    // i = tid + k*THREADS. Packed as (destination byte offset in the scale buffer << 16) |
    // (source byte offset in the ring slot), bit 15 set when the source lies past the plane
    // or past N (the scale is then 0; those tokens and rows are never stored).
    constexpr int A_ITEMS = T::TB * T::KC * 64 / T::THREADS, B_ITEMS = T::KC * T::BN / T::THREADS;
    static_assert(A_ITEMS * T::THREADS == T::TB * T::KC * 64 && B_ITEMS * T::THREADS == T::KC * T::BN,
                  "scale items divide evenly among the threads");
    static_assert(T::A_QS + T::A_SDA < (1 << 15) && T::B_RAW < (1 << 15) && T::SC < (1 << 16), "offsets fit the packing");
    uint32_t a_item[A_ITEMS], b_item[B_ITEMS];
#pragma unroll
    for (int k = 0; k < A_ITEMS; ++k) {
        const int i = tid + k * T::THREADS, tb = i / (T::KC * 64), j = (i / 64) % T::KC, r = i % 64;
        // token m = 16q + 8h + gg of warp row wi: lane gg reads (h = 0..1) of m-tile q as one float2
        const int m = tb * 64 + r, wi = m / T::WM, in = m % T::WM;
        const int q = in / 16, h = (in / 8) % 2, gg = in % 8;
        const uint32_t src = uint32_t(T::A_QS + ((tb * T::KC + j) * 64 + r) * 4);
        const uint32_t dst = uint32_t((j * T::BM + wi * T::WM + q * 16 + gg * 2 + h) * 4);
        a_item[k] = dst << 16 | src | (mt * T::TB + tb >= p.ntb ? 0x8000u : 0u);
    }
#pragma unroll
    for (int k = 0; k < B_ITEMS; ++k) {
        const int i = tid + k * T::THREADS, j = i / T::BN, rr = i % T::BN;
        // row 8ni + 2tt + hh of warp column wi: lane tt reads (ni, ni + 1) x (hh = 0..1) as one float4
        const int wi = rr / T::WN, in = rr % T::WN;
        const int ni = in / 8, tt = (in % 8) / 2, hh = in % 2;
        const uint32_t src = uint32_t(rr * T::P + 34 * j);  // relative to the weights' raw region
        const uint32_t dst = uint32_t(T::SC_A + (j * T::BN + wi * T::WN + (ni / 2) * 16 + tt * 4 + (ni % 2) * 2 + hh) * 4);
        b_item[k] = dst << 16 | src | (row0 + rr >= p.N ? 0x8000u : 0u);
    }

    // f16 scales of stage s -> f32 in fragment order, into scale buffer s & 1.
    auto convert_scales = [&](int s) {
        const int kcv = chunks_in(s);
        const uint8_t* slot = smem + (s % T::STAGES) * T::STAGE;
        const uint8_t* braw = slot + T::A_QS + T::A_SDA;
        uint8_t* sc = smem + T::STAGES * T::STAGE + (s & 1) * T::SC;
#pragma unroll
        for (int k = 0; k < A_ITEMS; ++k) {
            const uint32_t it = a_item[k], src = it & 0x7fffu;
            if (kcv != T::KC && int((src - T::A_QS) / 256 % T::KC) >= kcv) continue;
            float da = 0.0f;
            if (!(it & 0x8000u))
                da = __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(slot + src)));
            *reinterpret_cast<float*>(sc + (it >> 16)) = da;
        }
#pragma unroll
        for (int k = 0; k < B_ITEMS; ++k) {
            const uint32_t it = b_item[k], src = it & 0x7fffu;
            if (kcv != T::KC && (tid + k * T::THREADS) / T::BN >= kcv) continue;
            float dw = 0.0f;
            if (!(it & 0x8000u)) dw = __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(braw + src)));
            *reinterpret_cast<float*>(sc + (it >> 16)) = dw;
        }
    };

    float acc[T::MT][T::NT][4];
#pragma unroll
    for (int mi = 0; mi < T::MT; ++mi)
#pragma unroll
        for (int ni = 0; ni < T::NT; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;
    if constexpr (D == Defect::add_first) {  // the defect: the addend before the sum, not after it
#pragma unroll
        for (int mi = 0; mi < T::MT; ++mi)
#pragma unroll
            for (int ni = 0; ni < T::NT; ++ni)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int tok = mt * T::BM + wm * T::WM + mi * 16 + (e / 2) * 8 + g;
                    const int col = row0 + wn * T::WN + ni * 8 + 2 * t + e % 2;
                    if (tok < p.n && col < p.N)
                        acc[mi][ni][e] = (p.bias ? p.bias[col] : 0.0f) + (p.res ? p.res[size_t(tok) * p.N + col] : 0.0f);
                }
    }

    auto compute = [&](int s) {
        const int kcv = chunks_in(s);
        const uint8_t* slot = smem + (s % T::STAGES) * T::STAGE;
        const uint8_t* sc = smem + T::STAGES * T::STAGE + (s & 1) * T::SC;
        const float2* sca = reinterpret_cast<const float2*>(sc);
        const float4* scb = reinterpret_cast<const float4*>(sc + T::SC_A);
#pragma unroll
        for (int jj = 0; jj < T::KC; ++jj) {
            const int j = D == Defect::chunk_order ? T::KC - 1 - jj : jj;
            if (j >= kcv) continue;
            float4 bs[T::NT / 2];  // dw of rows 2t, 2t + 1 of n-tiles 2p, 2p + 1
#pragma unroll
            for (int pp = 0; pp < T::NT / 2; ++pp) bs[pp] = scb[(j * T::BN + wn * T::WN + pp * 16 + t * 4) / 4];
            uint32_t b[T::NT][2];
#pragma unroll
            for (int ni = 0; ni < T::NT; ++ni) {
                const uint8_t* bp = slot + b_base + ni * 8 * T::P + 34 * j;
                switch (j % 4) {  // j is a constant once unrolled
                    case 0: load_b<0>(bp, b[ni][0], b[ni][1]); break;
                    case 1: load_b<1>(bp, b[ni][0], b[ni][1]); break;
                    case 2: load_b<2>(bp, b[ni][0], b[ni][1]); break;
                    default: load_b<3>(bp, b[ni][0], b[ni][1]); break;
                }
            }
#pragma unroll
            for (int mi = 0; mi < T::MT; ++mi) {
                // Tokens g and g + 8, physical words 2t and 2t + 1: 8 bytes each. A half-warp
                // reads 4 tokens of one 4-token group, i.e. one whole 128-byte row of the plane.
                const uint2 lo = *reinterpret_cast<const uint2*>(slot + a_off(mi, 0) + j * kPad40TileBytes);
                const uint2 hi = *reinterpret_cast<const uint2*>(slot + a_off(mi, 1) + j * kPad40TileBytes);
                // da of tokens g and g + 8, and -kMagic * da (one exact multiply per 2 * NT outputs)
                const float2 da = sca[(j * T::BM + wm * T::WM + mi * 16 + g * 2) / 2];
                const float nm0 = mmq::neg_magic_times(da.x), nm1 = mmq::neg_magic_times(da.y);
#pragma unroll
                for (int ni = 0; ni < T::NT; ++ni) {
                    int32_t d[4];
                    mma_s8(d, lo.x, hi.x, lo.y, hi.y, b[ni][0], b[ni][1], mmq::kMagicBits);
                    const float dw0 = ni % 2 == 0 ? bs[ni / 2].x : bs[ni / 2].z;
                    const float dw1 = ni % 2 == 0 ? bs[ni / 2].y : bs[ni / 2].w;
                    float* c = acc[mi][ni];
                    c[0] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(d[0]), da.x, nm0), dw0, c[0]);
                    c[1] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(d[1]), da.x, nm0), dw1, c[1]);
                    c[2] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(d[2]), da.y, nm1), dw0, c[2]);
                    c[3] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(d[3]), da.y, nm1), dw1, c[3]);
                }
            }
        }
    };

    // Ring: stage s lives in slot s % STAGES; one commit group per stage (empty past the end),
    // so "stage s has landed" is "at most (groups committed) - (s + 1) groups pending".
#pragma unroll
    for (int s = 0; s < T::STAGES - 1; ++s) {
        if (s < nk) issue(s);
        cp_async_commit();
    }
    if constexpr (D != Defect::no_cp_async_wait) cp_async_wait<T::STAGES - 2>();  // stage 0
    __syncthreads();
    convert_scales(0);
    for (int s = 0; s < nk; ++s) {
        if constexpr (D != Defect::no_cp_async_wait) cp_async_wait<T::STAGES - 3>();  // stage s + 1
        // Stage s + 1's bytes visible to all; scales of stage s written; every warp done with
        // stage s - 1, whose ring slot and scale buffer are reused below.
        __syncthreads();
        if (s + T::STAGES - 1 < nk) issue(s + T::STAGES - 1);
        cp_async_commit();
        if (s + 1 < nk) convert_scales(s + 1);
        compute(s);
    }

    // Only real tokens and rows are stored.
    const int n_end = D == Defect::writes_padded_token ? p.n + 1 : p.n;
    const int col_end = D == Defect::writes_past_n ? (p.N + T::BN - 1) / T::BN * T::BN : p.N;
    // The bias of this thread's columns, loaded once before any store (bias might alias C as far
    // as the compiler knows, so loads between the stores would each wait for the stores before).
    float bv[T::NT][2];
    if (p.bias && D != Defect::add_first) {
#pragma unroll
        for (int ni = 0; ni < T::NT; ++ni) {
            const int col = row0 + wn * T::WN + ni * 8 + 2 * t;
            bv[ni][0] = col < col_end ? p.bias[col] : 0.0f;
            bv[ni][1] = col + 1 < col_end ? p.bias[col + 1] : 0.0f;
        }
    }
#pragma unroll
    for (int mi = 0; mi < T::MT; ++mi) {
        // This m-tile's residual values, all loaded before its first store: res may be C itself,
        // so a load may not move past an earlier store, and one load per store put an L2 round
        // trip on every element (the fused residual epilogue measured 2-3 us behind the separate
        // add). Each element is still read, then written, by the one thread that owns it.
        float rv[2][T::NT][2];
        if (p.res && D != Defect::add_first) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int tok = mt * T::BM + wm * T::WM + mi * 16 + h * 8 + g;
                const float* rrow = p.res + size_t(tok) * size_t(p.N);
#pragma unroll
                for (int ni = 0; ni < T::NT; ++ni) {
                    const int col = row0 + wn * T::WN + ni * 8 + 2 * t;
                    rv[h][ni][0] = tok < n_end && col < col_end ? rrow[col] : 0.0f;
                    rv[h][ni][1] = tok < n_end && col + 1 < col_end ? rrow[col + 1] : 0.0f;
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int tok = mt * T::BM + wm * T::WM + mi * 16 + h * 8 + g;
            if (tok >= n_end) continue;
            float* crow = p.C + size_t(tok) * size_t(p.N);
#pragma unroll
            for (int ni = 0; ni < T::NT; ++ni) {
                const int col = row0 + wn * T::WN + ni * 8 + 2 * t;
                float v0 = acc[mi][ni][2 * h], v1 = acc[mi][ni][2 * h + 1];
                if (D != Defect::add_first) {  // the epilogue: after the whole sum, one rounding each
                    if (p.bias) {
                        if (col < col_end) v0 = __fadd_rn(v0, bv[ni][0]);
                        if (col + 1 < col_end) v1 = __fadd_rn(v1, bv[ni][1]);
                    }
                    if (p.res) {
                        if (col < col_end) v0 = __fadd_rn(v0, rv[h][ni][0]);
                        if (col + 1 < col_end) v1 = __fadd_rn(v1, rv[h][ni][1]);
                    }
                }
                if (p.vec_store && col + 1 < col_end) {
                    *reinterpret_cast<float2*>(crow + col) = make_float2(v0, v1);
                } else {
                    if (col < col_end) crow[col] = v0;
                    if (col + 1 < col_end) crow[col + 1] = v1;
                }
            }
        }
    }
}

// ---- launch ---------------------------------------------------------------------------------

// The widest copy unit that every weight row segment of a stage is aligned to.
template <class T>
int weight_copy_bytes(const void* w, int nchunk) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(w);
    for (int g : {16, 8, 4})
        if (a % g == 0 && (size_t(nchunk) * 34) % g == 0 && (T::KC * 34) % g == 0) return g;
    return 2;
}

template <class T, int G, Defect D>
void launch_g(const Params& p, unsigned grid, cudaStream_t stream) {
    auto kernel = mmq_q8_0_kernel<T, G, D>;
    static const cudaError_t attr = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM);
    (void)attr;  // a failure resurfaces as the launch's error
    kernel<<<grid, T::THREADS, T::SMEM, stream>>>(p);
}

template <class T, Defect D = Defect::none>
void launch(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N, int64_t K,
            cudaStream_t stream, const float* bias = nullptr, const float* res = nullptr) {
    Params p{};
    p.bias = bias;
    p.res = res;
    p.qs = qs;
    p.sda = sda;
    p.w = reinterpret_cast<const uint8_t*>(w);
    p.C = C;
    p.n = int(n);
    p.N = int(N);
    p.nchunk = int(K / QK8_0);
    p.ntb = int((n + 63) / 64);
    p.m_tiles = (p.ntb + T::TB - 1) / T::TB;
    p.n_tiles = int((N + T::BN - 1) / T::BN);
    p.vec_store = N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
    const unsigned grid = unsigned(p.m_tiles) * unsigned(p.n_tiles);
    switch (weight_copy_bytes<T>(w, p.nchunk)) {
        case 16:
            if constexpr ((T::KC * 34) % 16 == 0) { launch_g<T, 16, D>(p, grid, stream); break; }
            [[fallthrough]];
        case 8:
            if constexpr ((T::KC * 34) % 8 == 0) { launch_g<T, 8, D>(p, grid, stream); break; }
            [[fallthrough]];
        case 4: launch_g<T, 4, D>(p, grid, stream); break;
        default: launch_g<T, 2, D>(p, grid, stream); break;
    }
}

// The tilings. All keep the same float order; they differ in CTA shape, occupancy and pipeline.
//                         TB WM WN MT NT KC S  min CTAs/SM
using Tile128x128 = Tiling<2, 2, 4, 4, 4, 4, 3, 1>;  // 256 threads, warp 64x32, 122 KiB smem
using Tile64x128 = Tiling<1, 1, 4, 4, 4, 4, 3, 2>;   // 128 threads, warp 64x32, 83 KiB smem
using Tile64x64 = Tiling<1, 2, 2, 2, 4, 4, 3, 3>;    // 128 threads, warp 32x32, 54 KiB smem

}  // namespace bitgate::cuda::mmq_impl
