#!/usr/bin/env python3
"""GGUF interoperability with the reference Python reader and writer (the `gguf` package).

1. bitgate writes a `tiny` synthetic model; gguf.GGUFReader reads it. Every tensor's name, type,
   shape, byte size and the md5 of its bytes (bitgate's from `model info --md5 --json`, gguf's from
   the array it maps) must agree, and so must the metadata keys, their types and scalar values.
2. gguf.GGUFWriter writes a small qwen2 model whose Q8_0 tensors are quantized by gguf's own
   quantizer; `bitgate model info` must load it and report the same dimensions and tensor md5s.

usage: gguf_interop.py BITGATE PYENV_DIR
Exit 0: all agree; 1: a mismatch; 77: the gguf package is not installed (skipped).
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

bitgate, pyenv = sys.argv[1], sys.argv[2]

try:
    import gguf  # noqa: F401
    import numpy as np
except ImportError:
    venv_python = os.path.join(pyenv, "bin", "python")
    if os.path.exists(venv_python) and not os.environ.get("BITGATE_GGUF_REEXEC"):
        os.environ["BITGATE_GGUF_REEXEC"] = "1"  # once: the venv's python must not loop
        os.execv(venv_python, [venv_python] + sys.argv)
    print(f"SKIP: the gguf Python package is not installed (ci/setup installs it into {pyenv} from PyPI)")
    sys.exit(77)

import gguf
import numpy as np

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run([bitgate, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        sys.exit(f"bitgate {' '.join(args)} exited {r.returncode}")
    return r.stdout


VT = gguf.GGUFValueType
vt_names = {VT.UINT8: "uint8", VT.INT8: "int8", VT.UINT16: "uint16", VT.INT16: "int16", VT.UINT32: "uint32",
            VT.INT32: "int32", VT.FLOAT32: "float32", VT.BOOL: "bool", VT.STRING: "string", VT.ARRAY: "array",
            VT.UINT64: "uint64", VT.INT64: "int64", VT.FLOAT64: "float64"}


def field_value(f):
    """A scalar or string field's value, decoded from the reader's parts."""
    t = f.types[0]
    if t == VT.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    v = f.parts[f.data[0]][0]
    return bool(v) if t == VT.BOOL else v.item()


with tempfile.TemporaryDirectory() as tmp:
    # ---- 1. bitgate writes, gguf reads -----------------------------------------------------------
    path = os.path.join(tmp, "tiny.gguf")
    run("model", "synth", "--preset", "tiny", "--seed", "11", "--out", path)
    run("model", "info", path, "--md5", "--json", os.path.join(tmp, "tiny.json"))
    info = json.load(open(os.path.join(tmp, "tiny.json")))
    r = gguf.GGUFReader(path)
    check(len(r.tensors) == len(info["tensors"]), f"tensor count {len(r.tensors)} vs {len(info['tensors'])}")
    for t, b in zip(r.tensors, info["tensors"]):
        check(t.name == b["name"], f"tensor name {t.name} vs {b['name']}")
        check(int(t.tensor_type) == b["type_id"], f"{t.name}: type {t.tensor_type!r} vs {b['type']}")
        check(t.tensor_type.name == b["type"], f"{t.name}: type name {t.tensor_type.name} vs {b['type']}")
        check([int(x) for x in t.shape] == b["ne"], f"{t.name}: shape {list(t.shape)} vs {b['ne']}")
        check(int(t.n_bytes) == b["bytes"], f"{t.name}: bytes {t.n_bytes} vs {b['bytes']}")
        md5 = hashlib.md5(np.ascontiguousarray(t.data).tobytes()).hexdigest()
        check(md5 == b["md5"], f"{t.name}: md5 {md5} (gguf) vs {b['md5']} (bitgate)")
    keys = [k for k in r.fields if not k.startswith("GGUF.")]
    check(keys == list(info["metadata"].keys()) or sorted(keys) == sorted(info["metadata"].keys()),
          f"metadata keys differ: {sorted(set(keys) ^ set(info['metadata']))}")
    for k in keys:
        f, m = r.fields[k], info["metadata"][k]
        check(vt_names[f.types[0]] == m["type"], f"{k}: type {vt_names[f.types[0]]} vs {m['type']}")
        if f.types[0] == VT.ARRAY:
            check(len(f.data) == m["value"]["length"], f"{k}: length {len(f.data)} vs {m['value']['length']}")
            check(vt_names[f.types[1]] == m["value"]["array"], f"{k}: element type")
        elif f.types[0] in (VT.FLOAT32, VT.FLOAT64):
            check(np.float32(field_value(f)) == np.float32(m["value"]), f"{k}: {field_value(f)} vs {m['value']}")
        else:
            check(field_value(f) == m["value"], f"{k}: {field_value(f)!r} vs {m['value']!r}")
    check(field_value(r.fields["general.architecture"]) == "qwen2", "architecture")
    tok = r.fields["tokenizer.ggml.tokens"]
    check(bytes(tok.parts[tok.data[32]]).decode() == "\u0120", "token 32 (space) is U+0120")
    print(f"bitgate -> gguf: {len(r.tensors)} tensors and {len(keys)} metadata keys compared")

    # ---- 2. gguf writes, bitgate reads -----------------------------------------------------------
    n_embd, n_ff, n_head, n_kv, n_vocab, n_layer = 64, 128, 4, 2, 300, 1
    head_dim = n_embd // n_head
    rng = np.random.default_rng(5)
    path2 = os.path.join(tmp, "from_gguf_py.gguf")
    w = gguf.GGUFWriter(path2, "qwen2")
    w.add_name("gguf-py small")
    w.add_block_count(n_layer)
    w.add_context_length(128)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    expect = {}

    def add(name, ne, qtype):
        # ne in ggml order (ne[0] = row length); numpy's shape is the reverse.
        x = (rng.standard_normal(tuple(reversed(ne))) * 0.02).astype(np.float32)
        if name.endswith("norm.weight"):
            x = (1 + x).astype(np.float32)
        data = gguf.quants.quantize(x, qtype) if qtype == gguf.GGMLQuantizationType.Q8_0 else x
        w.add_tensor(name, data, raw_dtype=qtype)
        expect[name] = (ne, qtype.name, hashlib.md5(np.ascontiguousarray(data).tobytes()).hexdigest())

    Q8, F32 = gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.F32
    add("token_embd.weight", [n_embd, n_vocab], Q8)
    for l in range(n_layer):
        b = f"blk.{l}."
        add(b + "attn_norm.weight", [n_embd], F32)
        add(b + "attn_q.weight", [n_embd, n_embd], Q8)
        add(b + "attn_q.bias", [n_embd], F32)
        add(b + "attn_k.weight", [n_embd, n_kv * head_dim], Q8)
        add(b + "attn_k.bias", [n_kv * head_dim], F32)
        add(b + "attn_v.weight", [n_embd, n_kv * head_dim], Q8)
        add(b + "attn_v.bias", [n_kv * head_dim], F32)
        add(b + "attn_output.weight", [n_embd, n_embd], Q8)
        add(b + "ffn_norm.weight", [n_embd], F32)
        add(b + "ffn_gate.weight", [n_embd, n_ff], Q8)
        add(b + "ffn_up.weight", [n_embd, n_ff], Q8)
        add(b + "ffn_down.weight", [n_ff, n_embd], Q8)
    add("output_norm.weight", [n_embd], F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    out = run("model", "info", path2, "--md5", "--json", os.path.join(tmp, "py.json"))
    got = json.load(open(os.path.join(tmp, "py.json")))
    h = got["hparams"]
    check((h["n_layer"], h["n_embd"], h["n_ff"], h["n_head"], h["n_head_kv"], h["n_vocab"], h["n_ctx"]) ==
          (n_layer, n_embd, n_ff, n_head, n_kv, n_vocab, 128), f"hparams {h}")
    check(h["tied"] is True, "no output.weight: tied")
    check(got["metadata"]["general.name"]["value"] == "gguf-py small", "general.name")
    check(len(got["tensors"]) == len(expect), f"tensor count {len(got['tensors'])} vs {len(expect)}")
    for t in got["tensors"]:
        ne, tn, md5 = expect[t["name"]]
        check(t["ne"] == ne and t["type"] == tn and t["md5"] == md5,
              f"{t['name']}: bitgate {t['ne']} {t['type']} {t['md5']} vs gguf-py {ne} {tn} {md5}")
    print(f"gguf -> bitgate: {len(got['tensors'])} tensors compared (gguf package at {os.path.dirname(gguf.__file__)})")

if failures:
    print(f"{len(failures)} mismatches")
    sys.exit(1)
print("gguf interop: ok")
