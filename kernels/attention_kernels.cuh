// The attention kernels, templated on head_dim and on a defect (Bug::none in kernels/attention.cu;
// the others only in mutants/attention.cu). The order they follow is the host
// model's (refimpl/attention.hpp, docs/attention.md):
//   s_j   = (fma chain over d ascending from +0 of q[d] * k_j[d]) * scale
//   split = keys [128 c, 128 c + 128) up to the query's position: m = max, p = exp_det(s - m),
//           l = p summed in key order from +0, acc[d] = fma chain of p_j * v_j[d] in key order
//   fold  = in groups of 32 splits, each in position order: M' = max(M, m), a = exp_det(M - M'),
//           b = exp_det(m - M'), Ls = fma(Ls, a, l * b), A = fma(A, a, acc * b), a group's first
//           split starting its state; then the groups' states the same way in group order, group
//           0 starting the whole; out = A / Ls
// Masked keys inside a tile enter as p = 0: l + 0 and fma(0, v, acc) change no bit (v finite).
// Every multiply-add is an explicit fmaf (the build has -fmad=false); exp is exp_det, no
// hardware approximation (decode and the combines call exp_det_nonpos, its bits for the
// arguments <= 0 they pass); no atomics; nothing depends on the grid beyond the shape.
//
// tests/attention_sim_test.cpp compiles these files for the CPU, with the CUDA features it uses
// emulated (tests/cuda_sim.hpp): plain C++ in the kernels, nothing else from CUDA.
#pragma once
#include "attention_common.cuh"
#include "attention_decode_split.cuh"
#include "attention_decode_pipe.cuh"
#include "attention_combine.cuh"
#include "attention_prefill.cuh"
