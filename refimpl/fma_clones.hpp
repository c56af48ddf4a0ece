// Host models that call fmaf in inner loops (exp_det) are built twice on x86-64: a default
// clone, where std::fma is a libm call emulating the fused multiply-add (about 4 ns), and an FMA
// clone picked at load time on CPUs that have the instruction. fma is exactly rounded either way,
// so both clones give the same bits; only the time differs (about 4x on the exhaustive exp sweep).
#pragma once
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BITGATE_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define BITGATE_FMA_CLONES
#endif
