// Host models that call fmaf in inner loops (exp_det) are built twice on x86-64: a default
// clone, where std::fma is a libm call emulating the fused multiply-add (about 4 ns), and an FMA
// clone picked at load time on CPUs that have the instruction. fma is exactly rounded either way,
// so both clones give the same bits; only the time differs (about 4x on the exhaustive exp sweep).
// Not under ThreadSanitizer: the loader runs the clones' resolvers before its runtime is up, and
// the instrumented resolver crashes the program at load (so a TSan build takes the default code).
#pragma once
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define BITGATE_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define BITGATE_FMA_CLONES
#endif

// Loops written for the compiler to vectorize (lanes are independent outputs, each doing the
// definition's own operations in order) are built for AVX-512, AVX2 + FMA and the baseline, the
// best picked at load time. Vector lanes round exactly as scalar code does (-ffp-contract=off,
// no fast-math): the clones differ in time only.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define BITGATE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define BITGATE_SIMD_CLONES
#endif
