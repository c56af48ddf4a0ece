#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention (bf16, causal, GQA) at bitgate's prefill attention
shapes, timed as bitgate bench times its back-to-back rate: CUDA events around many calls.
The peer for `bitgate bench --family attention` (bench/RESULTS.md); needs torch with CUDA.
usage: bench/peer-sdpa.py [n_q n_head n_kv_head head_dim ...]   (default: the 7B and 0.5B shapes at 3325)
FLOPs counted as bitgate counts them: 4 * n_head * head_dim * (causal pairs) per call."""
import sys

import torch
import torch.nn.functional as F


def measure(n, n_head, n_kv, d, reps=50):
    g = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(1, n_head, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
    k = torch.randn(1, n_kv, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
    v = torch.randn(1, n_kv, n, d, device="cuda", dtype=torch.bfloat16, generator=g)
    call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        call()
    end.record()
    torch.cuda.synchronize()
    us = start.elapsed_time(end) * 1000.0 / reps
    pairs = n * (n + 1) / 2
    tflops = 4.0 * n_head * d * pairs / (us * 1e-6) / 1e12
    print(f"sdpa bf16 causal n_q={n} L={n} n_head={n_head} n_kv_head={n_kv} head_dim={d}: {us:.1f} us, {tflops:.1f} TFLOPS"
          f" (torch {torch.__version__}, {torch.cuda.get_device_name()})")


args = [int(a) for a in sys.argv[1:]]
shapes = [args[i:i + 4] for i in range(0, len(args), 4)] or [[3325, 28, 4, 128], [3325, 14, 2, 64], [512, 28, 4, 128]]
for s in shapes:
    measure(*s)
