#!/usr/bin/env python3
"""Random-initialised qwen35 (Qwen3.5 hybrid) GGUFs written directly with the `gguf` package, in
llama.cpp's conventions (names, shapes, stored norms, ssm_a = -exp(A_log), tiled V-head order), at real
published shapes. They are the inputs of the hybrid parity investigation (docs/hybrid-parity.md):
the same file goes to Cairn, to llama.cpp, and (dequantized, via golden_from_gguf.py) to transformers.

    python3 tools/random_gguf.py OUT.gguf [--shape 0.8b|tiny-nv2] [--layers N] [--vocab V]
                                 [--type f32|q8_0] [--seed S] [--std 0.02] [--tokenizer HF_DIR]

Initialisation (the issue #20 recipe): every matrix and the conv kernel N(0, std^2); every norm
stored as 1.0 (what llama.cpp's converter writes for HF's zero-centred norms initialised to 0, and for
the GDN norm initialised to 1); ssm_a = -A with A = 1 + 15 u; ssm_dt.bias = 1 (HF's init).

Values are reproducible bit for bit in C++ (tests/model/parity_weights.h implements the same
generator), so the model tests rebuild these files instead of committing them:
  key(name)  = FNV-1a 64 of the tensor name, xor (seed * 0x9E3779B97F4A7C15)
  h(i)       = splitmix64 finaliser of key + (i + 1) * 0x9E3779B97F4A7C15   (i = flat index, ne0 fastest)
  u_j        = (((h >> 16 j) & 0xFFFF) + 0.5) / 65536,  j = 0..3
  normal(i)  = float32((u_0 + u_1 + u_2 + u_3 - 2) * sqrt(3) * std)       (Irwin-Hall, |x| <= 3.46 std)
  uniform(i) = u_0
Q8_0 blocks are made by gguf.quants.quantize.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)

# name: (layers, hidden, ff, heads, kv heads, head dim, gdn k heads, gdn v heads, gdn head dim, rope sections)
SHAPES = {
    # Qwen3.5-0.8B (hybrid-architectures.md §1.2; llama.cpp's loader calls 24 layers x 1024 "0.8B")
    "0.8b": dict(layers=24, hidden=1024, ff=3584, heads=8, kv=2, hd=256, nk=16, nv=16, dk=128,
                 sections=[11, 11, 10, 0]),
    # small hybrid with two value heads per key head (as Qwen3.5-4B and larger)
    "tiny-nv2": dict(layers=8, hidden=256, ff=512, heads=4, kv=2, hd=64, nk=2, nv=4, dk=64,
                     sections=[3, 3, 2, 0]),
}


def fnv1a64(s: str) -> int:
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def stream(name: str, seed: int, n: int, chunk: int = 1 << 24):
    """Yields the raw 64-bit hashes h(i), i = 0..n-1, in chunks."""
    key = np.uint64(fnv1a64(name) ^ ((seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF))
    with np.errstate(over="ignore"):
        for s in range(0, n, chunk):
            i = np.arange(s + 1, min(n, s + chunk) + 1, dtype=np.uint64)
            z = key + i * GAMMA
            z = (z ^ (z >> np.uint64(30))) * M1
            z = (z ^ (z >> np.uint64(27))) * M2
            yield z ^ (z >> np.uint64(31))


def uniforms(h):
    m = np.uint64(0xFFFF)
    return [((h >> np.uint64(16 * j)) & m).astype(np.float64) * (1.0 / 65536) + 0.5 / 65536 for j in range(4)]


def normal(name: str, shape, seed: int, std: float) -> np.ndarray:
    n = int(np.prod(shape))
    parts = []
    for h in stream(name, seed, n):
        u = uniforms(h)
        parts.append((((u[0] + u[1]) + u[2]) + u[3] - 2.0) * math.sqrt(3.0) * std)
    return np.concatenate(parts).astype(np.float32).reshape(shape)


def uniform(name: str, shape, seed: int) -> np.ndarray:
    n = int(np.prod(shape))
    return np.concatenate([uniforms(h)[0] for h in stream(name, seed, n)]).reshape(shape)


def tensor_specs(s: dict, vocab: int):
    """(name, numpy shape = reversed ne, init) in file order."""
    H, ff, hd = s["hidden"], s["ff"], s["hd"]
    key_dim, value_dim = s["nk"] * s["dk"], s["nv"] * s["dk"]
    conv_dim = 2 * key_dim + value_dim
    out = [("token_embd.weight", (vocab, H), "matrix")]
    for il in range(s["layers"]):
        p = f"blk.{il}."
        out += [(p + "attn_norm.weight", (H,), "one"), (p + "post_attention_norm.weight", (H,), "one")]
        if (il + 1) % 4 != 0:
            out += [(p + "attn_qkv.weight", (conv_dim, H), "matrix"),
                    (p + "attn_gate.weight", (value_dim, H), "matrix"),
                    (p + "ssm_beta.weight", (s["nv"], H), "matrix"),
                    (p + "ssm_alpha.weight", (s["nv"], H), "matrix"),
                    (p + "ssm_conv1d.weight", (conv_dim, 4), "conv"),
                    (p + "ssm_dt.bias", (s["nv"],), "dt"),
                    (p + "ssm_a", (s["nv"],), "a"),
                    (p + "ssm_norm.weight", (s["dk"],), "one"),
                    (p + "ssm_out.weight", (H, value_dim), "matrix")]
        else:
            out += [(p + "attn_q.weight", (2 * s["heads"] * hd, H), "matrix"),
                    (p + "attn_k.weight", (s["kv"] * hd, H), "matrix"),
                    (p + "attn_v.weight", (s["kv"] * hd, H), "matrix"),
                    (p + "attn_q_norm.weight", (hd,), "one"),
                    (p + "attn_k_norm.weight", (hd,), "one"),
                    (p + "attn_output.weight", (H, s["heads"] * hd), "matrix")]
        out += [(p + "ffn_gate.weight", (ff, H), "matrix"), (p + "ffn_up.weight", (ff, H), "matrix"),
                (p + "ffn_down.weight", (H, ff), "matrix")]
    out.append(("output_norm.weight", (H,), "one"))
    return out


def make_tensor(name, shape, init, seed, std):
    if init in ("matrix", "conv"):
        return normal(name, shape, seed, std)
    if init == "one":
        return np.ones(shape, np.float32)
    if init == "dt":
        return np.ones(shape, np.float32)
    if init == "a":
        return (-(1.0 + 15.0 * uniform(name, shape, seed))).astype(np.float32)
    raise ValueError(init)


def write(out, shape="0.8b", layers=None, vocab=4096, qtype="q8_0", seed=1, std=0.02, tokenizer=None):
    import gguf
    s = dict(SHAPES[shape])
    if layers:
        s["layers"] = layers
    w = gguf.GGUFWriter(out, "qwen35")
    w.add_name(f"cairn-parity-qwen35-{shape}-{s['layers']}l")
    w.add_file_type({"f32": 0, "q8_0": 7}[qtype])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    w.add_context_length(262144)
    w.add_embedding_length(s["hidden"])
    w.add_feed_forward_length(s["ff"])
    w.add_block_count(s["layers"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv"])
    w.add_key_length(s["hd"])
    w.add_value_length(s["hd"])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e7)
    w.add_rope_dimension_count(s["hd"] // 4)
    w.add_rope_dimension_sections(s["sections"])
    w.add_ssm_conv_kernel(4)
    w.add_ssm_state_size(s["dk"])
    w.add_ssm_group_count(s["nk"])
    w.add_ssm_time_step_rank(s["nv"])
    w.add_ssm_inner_size(s["nv"] * s["dk"])
    w.add_full_attention_interval(4)
    w.add_vocab_size(vocab)
    if tokenizer:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import hf_to_gguf_reference as h2g
        h2g.add_tokenizer(w, tokenizer, {"vocab_size": vocab})
    else:
        w.add_tokenizer_model("none")
    types = {}
    for name, shp, init in tensor_specs(s, vocab):
        t = make_tensor(name, shp, init, seed, std)
        if qtype == "q8_0" and init == "matrix":
            w.add_tensor(name, gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            types["q8_0"] = types.get("q8_0", 0) + 1
        else:
            w.add_tensor(name, t)
            types["f32"] = types.get("f32", 0) + 1
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return s, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", default="0.8b", choices=list(SHAPES))
    ap.add_argument("--layers", type=int, default=None)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--type", default="q8_0", choices=["f32", "q8_0"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--std", type=float, default=0.02)
    ap.add_argument("--tokenizer", default=None, help="HF tokenizer dir to embed (vocab must cover it)")
    a = ap.parse_args()
    s, types = write(a.out, a.shape, a.layers, a.vocab, a.type, a.seed, a.std, a.tokenizer)
    print(f"{a.out}: {os.path.getsize(a.out)} bytes, {json.dumps(s)}, tensor types {types}")


if __name__ == "__main__":
    main()
