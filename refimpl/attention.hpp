// Host model of attention: causal GQA softmax attention over an F16 KV cache, in the order of
// docs/attention.md (splits of kAttnSplit keys, two-pass softmax inside a split, splits folded in
// position order within groups of kAttnFoldGroup, then the groups in order). The prefill and
// decode kernels follow this one order.
#pragma once
#include <cstdint>
#include <string>

#include "bitgate/attention_order.hpp"
#include "host_path.hpp"

namespace bitgate::ref {

// q [n_q][n_head][head_dim] f32; k_cache, v_cache [n_kv_head][ctx][head_dim] f16 bits holding L
// valid positions; query i sits at position L - n_q + i and attends keys 0 .. L - n_q + i; head h
// reads kv head h / (n_head / n_kv_head); out [n_q][n_head][head_dim] f32. Reads no cache
// position >= L. The caller validates: head_dim in {64, 128}, n_head % n_kv_head == 0,
// 1 <= n_q <= L <= ctx.
// `path`: scalar runs attention_split itself; any other runs the same operations in a layout the
// compiler vectorizes (host_path.hpp: the time changes, never a byte).
void attention_f16kv(const float* q, const uint16_t* k_cache, const uint16_t* v_cache, int64_t n_q, int64_t L,
                     int64_t ctx, int64_t n_head, int64_t n_kv_head, int64_t head_dim, float* out,
                     HostPath path = HostPath::fastest);

// One split of one query row, the unit the order is built from: keys j0 .. j1 - 1 (j0 < j1) of
// the f32 rows k and v ([position][head_dim]); q the query row.
//   s_j = (fma chain over d = 0 .. D-1 from +0 of q[d] * k_j[d]) * scale
//   m   = max s_j;   p_j = exp_det(s_j - m);   l = ((p_j0 + p_j0+1) + ...) from +0, key order
//   acc[d] = fma chain over j in key order from +0 of p_j * v_j[d]
void attention_split(const float* q, const float* k, const float* v, int64_t j0, int64_t j1, int64_t head_dim,
                     float scale, float& m, float& l, float* acc);

// Folds split (m, l, acc) into the running state (M, Ls, A) of the splits before it in its group,
// and a group's state the same way into the state of the groups before it:
//   M' = m > M ? m : M;  a = exp_det(M - M');  b = exp_det(m - M')
//   Ls = fma(Ls, a, l * b);  A[d] = fma(A[d], a, acc[d] * b);  M = M'
// (the products of the new split are independent of the state: the kernels' chain is one fma.)
// A group's state starts as its first split's (m, l, acc) unchanged, the whole as group 0's;
// out[d] = A[d] / Ls at the end.
void attention_fold(float& M, float& Ls, float* A, float m, float l, const float* acc, int64_t head_dim);

// Shapes the decode kernel takes: "" or why not (one query, at most 64 heads per kv head).
std::string attention_decode_problem(int64_t n_q, int64_t n_head, int64_t n_kv_head);

}  // namespace bitgate::ref
