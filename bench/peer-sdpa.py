#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention at bitgate's attention bench shapes: the peer for
`bitgate bench --family attention` (bench/RESULTS.md); needs torch with CUDA.

usage: bench/peer-sdpa.py [n_q n_head n_kv_head head_dim ...]
         prefill: bf16, causal, GQA; CUDA events around many calls, as bitgate bench times its
         back-to-back rate (default: the 7B and 0.5B shapes at 3325, and 7B at 512). FLOPs counted
         as bitgate counts them: 4 * n_head * head_dim * (causal pairs) per call.
       bench/peer-sdpa.py --decode [L n_head n_kv_head head_dim ...]
         decode: one query over an f16 KV cache of L positions (the cache type bitgate's decode
         reads), GQA, no mask; the calls captured in a CUDA graph that cycles over copies of the
         cache totalling at least 256 MiB (so none is read from L2), best of 6 replays, as
         bitgate bench times decode (default: the 7B and 0.5B shapes at 32768 and 4096). Bytes
         counted as bitgate counts them: the K and V rows of the L positions, q and out; set them
         against the read ceiling `bitgate bench` prints in the same call."""
import sys

import torch
import torch.nn.functional as F


def device_name():
    return f"torch {torch.__version__}, {torch.cuda.get_device_name()}"


def prefill(n, n_head, n_kv, d, reps=50):
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
          f" ({device_name()})")


def decode(L, n_head, n_kv, d, calls=30, replays=6):
    cache_bytes = 2 * n_kv * L * d * 2
    copies = max(3, -(-(256 << 20) // cache_bytes))
    g = torch.Generator(device="cuda").manual_seed(1)
    qs = [torch.randn(1, n_head, 1, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(copies)]
    ks = [torch.rand(1, n_kv, L, d, device="cuda", dtype=torch.float16, generator=g) * 2 - 1 for _ in range(copies)]
    vs = [torch.rand(1, n_kv, L, d, device="cuda", dtype=torch.float16, generator=g) * 2 - 1 for _ in range(copies)]
    outs = [None] * copies
    call = lambda i: F.scaled_dot_product_attention(qs[i % copies], ks[i % copies], vs[i % copies], enable_gqa=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(copies):
            outs[i] = call(i)  # warm-up, and the backend chosen before capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            outs[i % copies] = call(i)
    graph.replay()
    torch.cuda.synchronize()
    best = float("inf")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(replays):
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) * 1000.0 / calls)
    moved = cache_bytes + 2 * n_head * d * 2
    print(f"sdpa f16 decode n_q=1 L={L} n_head={n_head} n_kv_head={n_kv} head_dim={d}: {best:.2f} us, "
          f"{moved / (best * 1e-6) / 1e9:.0f} GB/s ({copies} copies of the cache, {device_name()})")


args = sys.argv[1:]
mode = decode if args[:1] == ["--decode"] else prefill
nums = [int(a) for a in (args[1:] if mode is decode else args)]
shapes = [nums[i:i + 4] for i in range(0, len(nums), 4)]
if not shapes:
    shapes = ([[32768, 28, 4, 128], [32768, 14, 2, 64], [4096, 28, 4, 128], [4096, 14, 2, 64]] if mode is decode
              else [[3325, 28, 4, 128], [3325, 14, 2, 64], [512, 28, 4, 128]])
for s in shapes:
    mode(*s)
