// mmq_q8_0, Hopper variant `wgmma` (the kernel template, shared by kernels/sm90a/mmq_q8_0_wgmma.cu
// and the defective launchers of kernels/sm90a/mutants/): the same product and the same float order as the mma.sync
// kernels (docs/mmq_q8_0.md), on sm_90a's asynchronous warpgroup MMA. Built for sm_90a only
// (cmake/sm90a.cmake); where it is not built the variant has no device launcher and the engine
// skips its device checks with that reason.
//
// C[t][r]: per 32-k chunk c the exact int32 sum sumi_c comes from one
// wgmma.mma_async m64n128k32 s32.s8.s8 whose accumulators start at kMagicBits, then the two fmaf
// of bitgate/mmq_epilogue.hpp fold it into acc, chunks c = 0, 1, ..., K/32 - 1 in ascending
// order, no split over K: the bytes of mma == t128x128 == t64x128 == t64x64.
//
// CTA: 128 tokens (two pad40 token blocks) x 128 weight rows, three warpgroups.
//   * Producer warpgroup: the weights only. It puts each stage (4 chunks) in flight on the
//     stage's `landed_w` mbarrier, each row's 16-byte-aligned window around its 4 x 34 raw bytes
//     as 16-byte cp.async granules, one row a thread, each thread's completion one
//     arrival (cp.async.mbarrier.arrive.noinc); one bulk copy per row, issued by one warp,
//     starved the pipeline (128 small copies a stage, docs/mmq_q8_0.md). The raw windows are its
//     own: a slot is refilled as soon as the producers have repacked it, not when the consumers
//     are done with the stage, so the weights run up to STAGES stages ahead. It then repacks
//     the weights: the 32 qs bytes of each (row, chunk) into the 32-byte-swizzle K-major layout
//     wgmma reads, and the f16 scale to f32 in fragment order; fence.proxy.async; arrive on the
//     stage's `ready` mbarrier, once the consumers have released the slot's previous stage
//     (`freed`).
//   * Two consumer warpgroups, one per token block: per chunk, accumulators := kMagicBits, one
//     wgmma with A = the activation tile straight from the plane (see
//     mmq_q8_0_wgmma_layout.hpp: the pad40 tile is a 32-byte-swizzle operand up to a token
//     permutation) and B = the repacked weights, then the epilogue. A warpgroup's activation
//     tiles are read by it alone, so it copies them itself: one thread puts the stage's qs tiles
//     (4 x 2048 contiguous bytes of the plane) and sda words (4 x 256) in flight as two
//     cp.async.bulk on its `landed_a` mbarrier (transaction bytes), and refills the slot once
//     the warpgroup is done with it (a named barrier of its 128 threads). A stage's weights are
//     released on `freed` once its last wgmma has completed and its scales are read.
// The weights' copies read whole 16-byte granules around each row's bytes: never outside a
// granule that holds a weight byte, so never outside a mapped page.
#pragma once
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "the wgmma kernel is built for sm_90a only (wgmma, cp.async.bulk): see cmake/sm90a.cmake"
#endif

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "bitgate/formats.hpp"
#include "bitgate/mmq_epilogue.hpp"
#include "bitgate/pad40.hpp"
#include "mmq_q8_0_wgmma_layout.hpp"

namespace bitgate::cuda {

namespace mmq_wgmma {

constexpr int TB = 2;                  // token blocks per CTA: one consumer warpgroup each
constexpr int BM = 64 * TB;            // tokens per CTA
constexpr int BN = 128;                // weight rows per CTA: the wgmma N
constexpr int KC = 4;                  // chunks per stage
constexpr int STAGES = 3;
constexpr int CONSUMERS = 128 * TB;
constexpr int THREADS = CONSUMERS + 128;

// One stage, byte offsets from its 1024-aligned base.
constexpr int A_QS = 0;                          // [TB][KC][2048]: the plane's tiles as they lie
constexpr int A_SDA = A_QS + TB * KC * 2048;     // [TB][KC][64] sda words
constexpr int B_CAN = A_SDA + TB * KC * 256;     // [KC][BN rows x 32 bytes], 32-byte swizzle
constexpr int B_DW = B_CAN + KC * BN * 32;       // [KC][BN] f32 row scales, fragment order
constexpr int RAW_PITCH = 176;                   // >= 15 + KC*34 rounded up to 16, and 16 mod 32
constexpr int RAW_GRANULES = (15 + KC * 34 + 15) / 16;  // 16-byte granules of a row's window, at most
constexpr int B_RAW = B_DW + KC * BN * 4;        // [BN][RAW_PITCH] raw weight windows
constexpr int STAGE = (B_RAW + BN * RAW_PITCH + 1023) / 1024 * 1024;
constexpr int BARRIERS = (3 + TB) * STAGES * 8;  // landed_w, ready, freed; landed_a per token block
constexpr int SMEM = 1024 + STAGES * STAGE + BARRIERS;  // + room to align the base to 1024
static_assert(B_CAN % 256 == 0 && A_QS % 256 == 0, "wgmma operand tiles start on 256-byte boundaries");
static_assert(RAW_PITCH % 16 == 0 && RAW_PITCH >= ((15 + KC * 34 + 15) / 16) * 16 + 16,
              "a row window plus the repack's one-word over-read fits its pitch");
static_assert(RAW_PITCH >= 16 * RAW_GRANULES, "a row's granules fit its pitch");
static_assert(SMEM <= 227 * 1024, "fits the opt-in shared memory of sm_90");
// Registers a thread, moved between the roles at the start (setmaxnreg): the launch gives every
// thread 168 (65,536 / 384, rounded down to 8), where the consumers' 64 accumulators, two sets of
// 32 in flight and their scales spilled 52 bytes to local memory inside the chunk loop (4.2 M
// local loads and stores at 3325 x 3584 x 3584, Nsight Compute). The producers give back what
// the consumers take: 128 * 56 + 256 * 216 = 62,464 <= 65,536, and ptxas then spills nothing.
constexpr int kProducerRegs = 56;
constexpr int kConsumerRegs = 216;
static_assert(128 * kProducerRegs + CONSUMERS * kConsumerRegs <= 65536, "the register file holds both roles");

// serial: one accumulator set (m64n128k32 per chunk), each chunk's epilogue after its wgmma.
// overlapped: two sets, one per 64-row half (m64n64k32 each), so that a wgmma is always in flight
// during an epilogue, chunk c + 1's during chunk c's. Both fold the chunks in the same order.
enum class Pipeline { serial, overlapped };

// Test-only defects for the mutants (kernels/sm90a/mutants/); `none` is the kernel.
enum class Defect {
    none,
    chunk_order,    // the chunks of a full stage in descending order: another float order
    ready_early,    // the producers signal a stage's weights ready before they repack them
    add_first,      // the addends seed the accumulators instead of following the whole sum
};

struct Params {
    const uint8_t* qs;
    const uint32_t* sda;
    const uint8_t* w;  // BlockQ8_0 [N][nchunk], as bytes
    float* C;
    // The epilogue (family mmq_q8_0_add): C[t][r] = sum + bias[r], then + res[t][r], each one
    // __fadd_rn after the whole sum, as the mma.sync kernels do; either may be null, res may be C.
    const float* bias;
    const float* res;
    int n, N, nchunk, ntb;
    int m_tiles, n_tiles;
    int vec_store;  // N even and C 8-byte aligned: pairs of columns as one float2
};

// ---- PTX (sm_90a) --------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile(
        "{\n"
        ".reg .b64 state;\n"
        "mbarrier.arrive.shared::cta.b64 state, [%0];\n"
        "}\n" ::"r"(bar)
        : "memory");
}

// This thread's arrival, and `bytes` more transaction bytes the current phase must see land.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile(
        "{\n"
        ".reg .b64 state;\n"
        "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n"
        "}\n" ::"r"(bar), "r"(bytes)
        : "memory");
}

// Waits until the phase with parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// 16 bytes global -> shared, asynchronous (L2 only: the weights are read once per CTA).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

// One arrival on `bar` once every cp.async this thread issued before has landed; the arrival is
// one of the count the barrier was initialized with (.noinc).
__device__ __forceinline__ void cp_async_arrive(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Global -> shared bulk copy, completion counted in bytes on `bar`. 16-byte aligned addresses,
// a multiple of 16 bytes.
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// Generic-proxy writes to shared memory made visible to the async proxy (wgmma operands).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Named barrier `id` over `count` threads (a warpgroup: 128); id 0 is __syncthreads'.
__device__ __forceinline__ void named_sync(uint32_t id, uint32_t count) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

__device__ __forceinline__ void fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from touching an accumulator across a wgmma.wait_group: the register is
// "rewritten" here, after the wait, so reads of it cannot be scheduled above the wait.
__device__ __forceinline__ void fence_operand(int32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

// Shared-memory matrix descriptor: 32-byte swizzle (mode 3), K-major, 8-row groups 256 bytes
// apart (stride byte offset), leading byte offset unused for swizzled K-major (1 by convention),
// base offset 0 (every tile starts on a 256-byte boundary).
__device__ __forceinline__ uint64_t sw32_desc(uint32_t addr) {
    return uint64_t((addr & 0x3FFFFu) >> 4) | (uint64_t(1) << 16) | (uint64_t(256 >> 4) << 32) | (uint64_t(3) << 62);
}

// d (64 x 128 int32, this thread's 64) += A (64 x 32 s8) * B (32 x 128 s8), both from shared memory.
__device__ __forceinline__ void wgmma_m64n128k32(int32_t (&d)[64], uint64_t a_desc, uint64_t b_desc) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p;\n"
        "}\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
          "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
          "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
          "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
          "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
          "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
          "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
          "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
        : "l"(a_desc), "l"(b_desc), "r"(1)
        : "memory");
}

// d (64 x 64 int32, this thread's 32) += A (64 x 32 s8) * B (32 x 64 s8), both from shared memory.
__device__ __forceinline__ void wgmma_m64n64k32(int32_t (&d)[32], uint64_t a_desc, uint64_t b_desc) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p;\n"
        "}\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
          "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
          "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
          "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
        : "l"(a_desc), "l"(b_desc), "r"(1)
        : "memory");
}

// ---- the kernel -----------------------------------------------------------------------------

template <Pipeline Pipe, Defect D>
__global__ void __launch_bounds__(THREADS, 1) mmq_q8_0_wgmma_kernel(const Params p) {
    extern __shared__ uint8_t smem_raw[];
    const uint32_t raw0 = smem_addr(smem_raw);
    const uint32_t base = (raw0 + 1023u) & ~1023u;  // swizzle patterns repeat on aligned addresses
    uint8_t* const gbase = smem_raw + (base - raw0);
    const uint32_t bars = base + uint32_t(STAGES * STAGE);
    // landed_w: the stage's raw weights arrived; ready: they are repacked; freed: consumed;
    // landed_a: token block tb's activation tiles arrived.
    auto landed_w = [&](int slot) { return bars + 8u * uint32_t(slot); };
    auto landed_a = [&](int tb, int slot) { return bars + 8u * uint32_t((3 + tb) * STAGES + slot); };
    auto ready = [&](int slot) { return bars + 8u * uint32_t(STAGES + slot); };
    auto freed = [&](int slot) { return bars + 8u * uint32_t(2 * STAGES + slot); };

    const int tid = threadIdx.x, lane = tid & 31;
    // The warpgroup index, warp-uniform by construction so that the compiler sees the roles'
    // branches (and every wgmma under them) as uniform.
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);

    // Raster: groups of 8 token tiles walk the row tiles together (L2 reuse of both operands).
    constexpr int kGroup = 8;
    int mt, nt;
    {
        const int per_group = kGroup * p.n_tiles;
        const int bid = blockIdx.x, first = bid / per_group * kGroup;
        const int size = min(p.m_tiles - first, kGroup);
        mt = first + (bid % per_group) % size;
        nt = (bid % per_group) / size;
    }
    const int row0 = nt * BN;
    const int nk = (p.nchunk + KC - 1) / KC;
    auto chunks_in = [&](int s) { return min(KC, p.nchunk - s * KC); };

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(landed_w(s), 128);  // each producer thread's cp.async arrival
            mbar_init(ready(s), 128);
            mbar_init(freed(s), CONSUMERS);
            for (int tb = 0; tb < TB; ++tb) mbar_init(landed_a(tb, s), 1);  // the copying thread's
        }
        fence_mbarrier_init();
    }
    __syncthreads();

    if (wg == TB) {
        // ---------------- producer warpgroup ----------------
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kProducerRegs));
        const int ptid = tid - CONSUMERS;
        const uintptr_t w_addr = reinterpret_cast<uintptr_t>(p.w);
        const size_t row_bytes = size_t(p.nchunk) * 34u;
        // What this thread repacks is the same at every stage, only K moves: so it is worked out
        // once here, and a stage costs a few adds per item (the producer's instructions were a
        // third of the SM's when computed per stage). Its copies: row ptid's window (`issue`).
        // Repack items: half h of the 32 qs bytes of each chunk of rows ptid / 2 and ptid / 2 + 64.
        const uint32_t h = uint32_t(ptid & 1);
        uint32_t r_mis[2], r_raw[2], r_can[2], r_dw[2];
        bool r_live[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            const uint32_t rr = uint32_t(ptid / 2 + 64 * r);
            r_live[r] = row0 + int(rr) < p.N;
            r_mis[r] = uint32_t((w_addr + size_t(row0 + int(rr)) * row_bytes) & 15u);  // at chunk 0
            r_raw[r] = uint32_t(B_RAW) + rr * uint32_t(RAW_PITCH);
            r_can[r] = uint32_t(B_CAN) + wgmma_layout::sw32_at(rr, 16u * h);
            r_dw[r] = uint32_t(B_DW) + 4u * wgmma_layout::dw_slot(rr);
        }

        // All producers: put stage s's weights in flight.
        auto issue = [&](int s) {
            const int slot = s % STAGES, c0 = s * KC, kcv = chunks_in(s);
            const uint32_t sb = base + uint32_t(slot * STAGE);
            // The weights: each row's window of 16-byte granules around its kcv blocks.
            const uintptr_t adv = uintptr_t(c0) * 34u, len = uintptr_t(kcv) * 34u;
            // Thread ptid copies row ptid's window: the row's granules are contiguous, so every
            // 32-byte sector a warp's copy touches is whole, and the thread needs a few registers
            // (the 56 of kProducerRegs) where a table of its granules needed ~40 more.
            if (row0 + ptid < p.N) {
                const uintptr_t src = w_addr + size_t(row0 + ptid) * row_bytes + adv;  // the row's first byte of the stage
                const uintptr_t lo = src & ~uintptr_t(15);
#pragma unroll
                for (int gi = 0; gi < RAW_GRANULES; ++gi)
                    if (lo + uintptr_t(16 * gi) < src + len)  // else past the row's last weight byte
                        cp_async16(sb + uint32_t(B_RAW + ptid * RAW_PITCH + 16 * gi),
                                   reinterpret_cast<const void*>(lo + uintptr_t(16 * gi)));
            }
            cp_async_arrive(landed_w(slot));
        };

        // All producers: the weights of stage s into wgmma's layout, scales to f32.
        auto repack = [&](int s) {
            const int slot = s % STAGES, kcv = chunks_in(s);
            const uint32_t sb = uint32_t(slot * STAGE);
            uint8_t* const gb = gbase;  // offsets below are from the aligned base
#pragma unroll
            for (int j = 0; j < KC; ++j) {
                if (j >= kcv) break;
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    if (!r_live[r]) continue;
                    const uint32_t mis = (r_mis[r] + uint32_t(s) * uint32_t(KC * 34)) & 15u;
                    const uint32_t blk = sb + r_raw[r] + mis + 34u * uint32_t(j);  // the block's d
                    const uint32_t off = blk + 2u + 16u * h;                         // 16 qs bytes
                    const uint32_t* wp = reinterpret_cast<const uint32_t*>(gb + (off & ~3u));
                    const uint32_t sh = (off & 3u) * 8u;  // 0 or 16: blocks are 2-byte aligned
                    const uint32_t w0 = wp[0], w1 = wp[1], w2 = wp[2], w3 = wp[3], w4 = wp[4];
                    const uint4 q = make_uint4(__funnelshift_r(w0, w1, sh), __funnelshift_r(w1, w2, sh),
                                               __funnelshift_r(w2, w3, sh), __funnelshift_r(w3, w4, sh));
                    *reinterpret_cast<uint4*>(gb + sb + r_can[r] + uint32_t(j * BN * 32)) = q;
                    if (h == 0) {
                        const float dw = __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(gb + blk)));
                        *reinterpret_cast<float*>(gb + sb + r_dw[r] + uint32_t(j * BN * 4)) = dw;
                    }
                }
            }
        };

        for (int s = 0; s < STAGES && s < nk; ++s) issue(s);
        for (int s = 0; s < nk; ++s) {
            const int slot = s % STAGES;
            mbar_wait(landed_w(slot), uint32_t(s / STAGES) & 1u);
            // The slot's canonical weights are the consumers' until they release stage s - STAGES.
            if (s >= STAGES) mbar_wait(freed(slot), uint32_t(s / STAGES - 1) & 1u);
            if constexpr (D == Defect::ready_early) {
                // Every barrier keeps its arrivals and their order (no phase can be missed, so the
                // defect cannot hang); only the repack moves after the signal.
                mbar_arrive(ready(slot));
                repack(s);
            } else {
                repack(s);
                fence_proxy_async();
                mbar_arrive(ready(slot));
            }
            if (s + STAGES < nk) {
                named_sync(1, 128);  // every producer is done reading the raw slot
                issue(s + STAGES);
            }
        }
        return;
    }

    // ---------------- consumer warpgroups: wg = token block of this CTA ----------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kConsumerRegs));
    const int wq = (tid % 128) / 32, g = lane >> 2, t = lane & 3;
    // This thread's accumulator rows m and m + 8, i.e. tokens tok[0], tok[1] of the block.
    const uint32_t m0 = uint32_t(16 * wq + g);
    const uint32_t tok[2] = {wgmma_layout::pad40_row_token(m0), wgmma_layout::pad40_row_token(m0 + 8)};
    const bool live = mt * TB + wg < p.ntb;  // a token block past the plane is neither read nor stored

    float acc[64];
#pragma unroll
    for (int e = 0; e < 64; ++e) acc[e] = 0.0f;
    if constexpr (D == Defect::add_first) {  // the defect: the addends first, then the chunks
#pragma unroll
        for (int e = 0; e < 64; ++e) {
            const int token = mt * BM + wg * 64 + int(tok[(e / 2) % 2]), col = row0 + 8 * (e / 4) + 2 * t + e % 2;
            if (token < p.n && col < p.N)
                acc[e] = (p.bias ? p.bias[col] : 0.0f) + (p.res ? p.res[size_t(token) * size_t(p.N) + col] : 0.0f);
        }
    }

    // One thread of the warpgroup: stage s's activation tiles of this token block in flight.
    auto issue_a = [&](int s) {
        const int slot = s % STAGES, c0 = s * KC, kcv = chunks_in(s);
        const uint32_t sb = base + uint32_t(slot * STAGE);
        const size_t tile = size_t(mt * TB + wg) * size_t(p.nchunk) + size_t(c0);
        mbar_arrive_expect_tx(landed_a(wg, slot), uint32_t(kcv) * (2048u + 256u));
        bulk_copy(sb + uint32_t(A_QS + wg * KC * 2048), p.qs + tile * 2048u, uint32_t(kcv) * 2048u,
                  landed_a(wg, slot));
        bulk_copy(sb + uint32_t(A_SDA + wg * KC * 256), p.sda + tile * 64u, uint32_t(kcv) * 256u, landed_a(wg, slot));
    };
    const bool copier = tid % 128 == 0;
    if (live && copier)
        for (int s = 0; s < STAGES && s < nk; ++s) issue_a(s);

    auto wait_stage = [&](int s) {
        const uint32_t par = uint32_t(s / STAGES) & 1u;
        if (live) mbar_wait(landed_a(wg, s % STAGES), par);
        mbar_wait(ready(s % STAGES), par);
        __syncwarp();  // the warp converged again before the .aligned wgmma instructions
    };
    // Stage s is done (its last wgmma completed, its scales read): release its weights, and
    // refill this token block's activation slot once all of the warpgroup is past it.
    auto end_stage = [&](int s) {
        mbar_arrive(freed(s % STAGES));
        if (live && s + STAGES < nk) {
            named_sync(2u + uint32_t(wg), 128);
            if (copier) issue_a(s + STAGES);
        }
    };
    // Descriptors of chunk q (global index: stage q / KC, chunk q % KC of it); B from weight row
    // `row` of the CTA's 128 (a multiple of 8: whole 256-byte row groups).
    auto a_desc_of = [&](int q) {
        const uint32_t sb = base + uint32_t(((q / KC) % STAGES) * STAGE);
        return sw32_desc(sb + uint32_t(A_QS + (wg * KC + q % KC) * 2048));
    };
    auto b_desc_of = [&](int q, int row) {
        const uint32_t sb = base + uint32_t(((q / KC) % STAGES) * STAGE);
        return sw32_desc(sb + uint32_t(B_CAN + (q % KC) * BN * 32 + row * 32));
    };
    // The float epilogue of chunk q for accumulator columns [8 * I0, 8 * I0 + 4 * NR / 2) of the
    // CTA's rows, whose wgmma has completed: acc = fmaf(RN(sumi * da), dw, acc) per element.
    // da of this thread's two tokens in chunk q (then -kMagic * da, exact), read before the wait
    // for the chunk's first wgmma so that their latency hides behind it. The second half reads
    // them again: kept live across both halves they pushed the accumulators into local memory at
    // 168 registers, and were still 3% slower at 216 (bench/RESULTS.md, 2026-12-03, second).
    // (Measured: within noise of reading them after the wait, 463.4 against 466.0 us at 3325 x
    // 3584 x 3584.)
    struct Scales {
        float da[2];
    };
    auto scales_of = [&](int q) {
        const uint8_t* const gb = gbase + ((q / KC) % STAGES) * STAGE;
        const uint32_t* sda = reinterpret_cast<const uint32_t*>(gb + A_SDA) + (wg * KC + q % KC) * 64;
        Scales sc;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            sc.da[r] = __half2float(__ushort_as_half(pad40_sda_d(sda[tok[r]])));
        }
        return sc;
    };
    auto epilogue = [&](auto& dd, int q, auto i0_tag, const Scales sc) {
        constexpr int NR = int(sizeof(dd) / sizeof(dd[0]));  // accumulator registers: 4 per 8 columns
        constexpr int I0 = decltype(i0_tag)::value;
#pragma unroll
        for (int e = 0; e < NR; ++e) fence_operand(dd[e]);
        const int slot = (q / KC) % STAGES, j = q % KC;
        const uint8_t* const gb = gbase + slot * STAGE;
        const float da[2] = {sc.da[0], sc.da[1]};
        const float nm[2] = {mmq::neg_magic_times(da[0]), mmq::neg_magic_times(da[1])};
        const float4* dwv = reinterpret_cast<const float4*>(gb + B_DW + j * BN * 4);
#pragma unroll
        for (int pp = 0; pp < NR / 8; ++pp) {
            const float4 q4 = dwv[(I0 / 2 + pp) * 4 + t];  // rows 16P + 2t, +1, 16P + 8 + 2t, +1
#pragma unroll
            for (int hf = 0; hf < 2; ++hf) {
                const int i = 2 * pp + hf;  // 8-column slab of dd; I0 + i of the CTA
                const float dw0 = hf ? q4.z : q4.x, dw1 = hf ? q4.w : q4.y;
#pragma unroll
                for (int r = 0; r < 2; ++r) {
                    float* c = &acc[4 * (I0 + i) + 2 * r];
                    c[0] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(dd[4 * i + 2 * r]), da[r], nm[r]), dw0,
                                                 c[0]);
                    c[1] = mmq::chunk_accumulate(mmq::chunk_term(__int_as_float(dd[4 * i + 2 * r + 1]), da[r], nm[r]),
                                                 dw1, c[1]);
                }
            }
        }
    };
    // After the last epilogue of a stage's last chunk its slot may be refilled.
    auto release_after = [&](int q) {
        if (q % KC == KC - 1 || q == p.nchunk - 1) end_stage(q / KC);
    };
    using Cols0 = std::integral_constant<int, 0>;
    using Cols64 = std::integral_constant<int, BN / 16>;

    if (!live) {
        // Keep the barriers' phases: wait for each stage, release it.
        for (int s = 0; s < nk; ++s) {
            wait_stage(s);
            end_stage(s);
        }
        return;
    }

    if constexpr (Pipe == Pipeline::serial) {
        // Per chunk: accumulators := kMagicBits, one m64n128k32, wait, epilogue.
        int32_t d[64];
#pragma unroll 1
        for (int q = 0; q < p.nchunk; ++q) {
            if (q % KC == 0) wait_stage(q / KC);
#pragma unroll
            for (int e = 0; e < 64; ++e) d[e] = mmq::kMagicBits;
#pragma unroll
            for (int e = 0; e < 64; ++e) fence_operand(d[e]);  // as in `issue` below
            wgmma_fence();
            wgmma_m64n128k32(d, a_desc_of(q), b_desc_of(q, 0));
            wgmma_commit();
            const Scales sc = scales_of(q);
            wgmma_wait<0>();
            epilogue(d, q, Cols0{}, sc);
            release_after(q);
        }
    } else {
        // Two accumulator sets, one per 64-row half of the CTA's 128 rows, each its own wgmma
        // m64n64k32 and commit group: while one half's epilogue runs, the other half's wgmma is
        // in flight (of the same chunk, or of the next one). Every output still takes its chunks
        // one at a time in ascending order. A full stage is straight-line code, so no in-flight
        // accumulator crosses a loop edge (the compiler would copy it there and ptxas would then
        // serialize every wgmma); the stage ends drained.
        int32_t lo[32], hi[32];
        auto issue = [&](int32_t(&dd)[32], int q, int row) {
#pragma unroll
            for (int e = 0; e < 32; ++e) dd[e] = mmq::kMagicBits;
            // The accumulators' initial values must be in their registers before wgmma.fence:
            // without this the compiler sinks the moves past it and ptxas then injects a
            // warpgroup.arrive before each wgmma (C7519), serializing them.
#pragma unroll
            for (int e = 0; e < 32; ++e) fence_operand(dd[e]);
            wgmma_fence();
            wgmma_m64n64k32(dd, a_desc_of(q), b_desc_of(q, row));
            wgmma_commit();
        };
#pragma unroll 1
        for (int s = 0; s < nk; ++s) {
            wait_stage(s);
            const int q0 = s * KC, kcv = chunks_in(s);
            if (kcv == KC) {
                // The stage's k-th chunk: k itself (the defect walks the stage backwards).
                auto at = [](int k) { return D == Defect::chunk_order ? KC - 1 - k : k; };
                issue(lo, q0 + at(0), 0);
#pragma unroll
                for (int j = 0; j < KC; ++j) {
                    issue(hi, q0 + at(j), BN / 2);
                    const Scales sc = scales_of(q0 + at(j));
                    wgmma_wait<1>();  // lo of chunk j done; hi of chunk j may still run
                    epilogue(lo, q0 + at(j), Cols0{}, sc);
                    if (j + 1 < KC) {
                        issue(lo, q0 + at(j + 1), 0);
                        wgmma_wait<1>();  // hi of chunk j done; lo of chunk j + 1 may still run
                    } else {
                        wgmma_wait<0>();
                    }
                    epilogue(hi, q0 + at(j), Cols64{}, scales_of(q0 + at(j)));
                }
            } else {  // the ragged last stage (K % 128 != 0, no real model): one half at a time
                // (with the two halves in flight together ptxas injected a warpgroup.wait here)
#pragma unroll 1
                for (int j = 0; j < kcv; ++j) {
                    issue(lo, q0 + j, 0);
                    const Scales sc = scales_of(q0 + j);
                    wgmma_wait<0>();
                    epilogue(lo, q0 + j, Cols0{}, sc);
                    issue(hi, q0 + j, BN / 2);
                    wgmma_wait<0>();
                    epilogue(hi, q0 + j, Cols64{}, sc);
                }
            }
            end_stage(s);
        }
    }

    if (!live) return;
    // Only real tokens and rows are stored. The addends of a token's row are all loaded before
    // its first store: res may be C itself, and each element is read, then written, by the one
    // thread that owns it.
    const bool add = D != Defect::add_first && (p.bias || p.res);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int token = mt * BM + wg * 64 + int(tok[r]);
        if (token >= p.n) continue;
        float* crow = p.C + size_t(token) * size_t(p.N);
        if (add) {
            const float* rrow = p.res ? p.res + size_t(token) * size_t(p.N) : nullptr;
            float bv[BN / 4], rv[BN / 4];
#pragma unroll
            for (int e = 0; e < BN / 4; ++e) {
                const int col = row0 + 8 * (e / 2) + 2 * t + e % 2;
                bv[e] = p.bias && col < p.N ? p.bias[col] : 0.0f;
                rv[e] = rrow && col < p.N ? rrow[col] : 0.0f;
            }
#pragma unroll
            for (int e = 0; e < BN / 4; ++e) {
                float& v = acc[4 * (e / 2) + 2 * r + e % 2];
                if (p.bias) v = __fadd_rn(v, bv[e]);
                if (p.res) v = __fadd_rn(v, rv[e]);
            }
        }
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
            const int col = row0 + 8 * i + 2 * t;
            const float v0 = acc[4 * i + 2 * r], v1 = acc[4 * i + 2 * r + 1];
            if (p.vec_store && col + 1 < p.N) {
                *reinterpret_cast<float2*>(crow + col) = make_float2(v0, v1);
            } else {
                if (col < p.N) crow[col] = v0;
                if (col + 1 < p.N) crow[col + 1] = v1;
            }
        }
    }
}

// ---- launch ---------------------------------------------------------------------------------

// "" on a compute capability 9.0 device, else why this kernel cannot run on the current one
// (its only image is sm_90a). Cached per device: bench calls the launcher in a tight loop.
inline std::string unsupported_here() {
    static std::atomic<int> cc[64] = {};  // 0: not read yet, else 10 * major + minor + 1
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return "mmq_q8_0/wgmma: no current CUDA device";
    int v = dev >= 0 && dev < 64 ? cc[dev].load(std::memory_order_relaxed) : 0;
    if (v == 0) {
        int major = 0, minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
            return "mmq_q8_0/wgmma: cannot read the device's compute capability";
        v = 10 * major + minor + 1;
        if (dev >= 0 && dev < 64) cc[dev].store(v, std::memory_order_relaxed);
    }
    if (v == 91) return "";
    return "mmq_q8_0/wgmma: built for sm_90a only; this device is sm_" + std::to_string(v - 1);
}

template <Pipeline Pipe, Defect D>
void launch_kernel(const Params& p, unsigned grid, cudaStream_t stream) {
    static const cudaError_t attr =
        cudaFuncSetAttribute(mmq_q8_0_wgmma_kernel<Pipe, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    (void)attr;  // a failure resurfaces as the launch's error
    mmq_q8_0_wgmma_kernel<Pipe, D><<<grid, THREADS, SMEM, stream>>>(p);
}


// Checks the arguments and the device, then enqueues one launch on `stream`.
template <Pipeline Pipe, Defect D = Defect::none>
void launch(const uint8_t* qs, const uint32_t* sda, const BlockQ8_0* w, float* C, int64_t n, int64_t N, int64_t K,
            cudaStream_t stream, const float* bias = nullptr, const float* res = nullptr) {
    if (reinterpret_cast<uintptr_t>(qs) % 16 != 0 || reinterpret_cast<uintptr_t>(sda) % 16 != 0)
        throw std::invalid_argument("mmq_q8_0/wgmma: the plane (qs, sda) must be 16-byte aligned");
    if (n < 1 || N < 1 || K < QK8_0 || K % QK8_0 != 0)
        throw std::invalid_argument("mmq_q8_0/wgmma: needs n, N >= 1 and K a positive multiple of 32");
    if (const std::string why = unsupported_here(); !why.empty()) throw std::runtime_error(why);
    Params p{};
    p.qs = qs;
    p.sda = sda;
    p.w = reinterpret_cast<const uint8_t*>(w);
    p.C = C;
    p.bias = bias;
    p.res = res;
    p.n = int(n);
    p.N = int(N);
    p.nchunk = int(K / QK8_0);
    p.ntb = int((n + 63) / 64);
    p.m_tiles = (p.ntb + TB - 1) / TB;
    p.n_tiles = int((N + BN - 1) / BN);
    p.vec_store = N % 2 == 0 && reinterpret_cast<uintptr_t>(C) % 8 == 0;
    launch_kernel<Pipe, D>(p, unsigned(p.m_tiles) * unsigned(p.n_tiles), stream);
}

}  // namespace mmq_wgmma

}  // namespace bitgate::cuda
