#!/usr/bin/env python3
"""Golden outputs for a (possibly quantized) GGUF: dequantize every tensor with the `gguf` package
(gguf.quants.dequantize), undo llama.cpp's converter transforms (tools/gguf_names.py), load the
weights into the matching transformers model (+ Cairn's MTP reference head for qwen35 nextn blocks)
and write goldens in the cairn-golden-v1 format (tests/model/golden/README.md).

    python3 tools/golden_from_gguf.py MODEL.gguf OUT_DIR [--stem golden-q8_0] [--lengths 1,7,64,300,2000]
                                      [--layer-states]

--layer-states adds, per prompt, the residual stream after every decoder layer at the last position
(pL.layer_last [n_layers, H]) and the last position's top-5 (pL.top5_ids, pL.top5_logprobs).

The HF config is rebuilt from the GGUF metadata (architectures llama / qwen3 / qwen35), so the GGUF
may come from `cairn convert` or from tools/hf_to_gguf_reference.py.  Needs torch, transformers >= 5, gguf.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_names as gn  # noqa: E402
import golden_common as gc  # noqa: E402
from cairn_mtp import MTPHead, load_mtp_from_state_dict  # noqa: E402


def read_gguf(path):
    import gguf
    r = gguf.GGUFReader(path)
    kv = {}
    for name, f in r.fields.items():
        try:
            kv[name] = f.contents()
        except Exception:  # noqa: BLE001
            pass
    tensors, types = {}, {}
    for t in r.tensors:
        qt = gguf.GGMLQuantizationType(int(t.tensor_type))
        arr = gguf.quants.dequantize(np.asarray(t.data), qt)
        shape = [int(x) for x in reversed(list(t.shape))]   # ne order -> numpy (row-major) order
        tensors[t.name] = np.asarray(arr, dtype=np.float32).reshape(shape)
        types[qt.name] = types.get(qt.name, 0) + 1
    return kv, tensors, types


def config_from_gguf(kv, tensors):
    arch = kv["general.architecture"]
    g = lambda k, d=None: kv.get(f"{arch}.{k}", d)  # noqa: E731
    n_block = int(g("block_count"))
    n_mtp = int(g("nextn_predict_layers", 0) or 0)
    n_layer = n_block - n_mtp
    V, H = tensors["token_embd.weight"].shape
    tied = "output.weight" not in tensors
    hd = int(g("attention.key_length", H // int(g("attention.head_count"))))
    common = dict(vocab_size=int(V), hidden_size=int(H), intermediate_size=int(g("feed_forward_length")),
                  num_hidden_layers=n_layer, num_attention_heads=int(g("attention.head_count")),
                  num_key_value_heads=int(g("attention.head_count_kv")), head_dim=hd,
                  max_position_embeddings=int(g("context_length")),
                  rms_norm_eps=float(g("attention.layer_norm_rms_epsilon")), tie_word_embeddings=tied)
    theta = float(g("rope.freq_base", 10000.0))
    if arch == "llama":
        return dict(model_type="llama", rope_parameters={"rope_type": "default", "rope_theta": theta},
                    attention_bias=False, mlp_bias=False, **common), n_mtp
    if arch == "qwen3":
        return dict(model_type="qwen3", rope_parameters={"rope_type": "default", "rope_theta": theta},
                    use_sliding_window=False, attention_bias=False, **common), n_mtp
    if arch == "qwen35":
        rd = int(g("rope.dimension_count"))
        sec = [int(x) for x in g("rope.dimension_sections", [11, 11, 10, 0])][:3]
        interval = int(g("full_attention_interval", 4))
        rec = g("attention.recurrent_layers")
        if rec is not None:
            layer_types = ["linear_attention" if x else "full_attention" for x in rec][:n_layer]
        else:
            layer_types = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(n_layer)]
        nv = int(g("ssm.time_step_rank"))
        return dict(model_type="qwen3_5_text",
                    rope_parameters={"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": rd / hd,
                                     "mrope_section": sec, "mrope_interleaved": True},
                    linear_conv_kernel_dim=int(g("ssm.conv_kernel")), linear_key_head_dim=int(g("ssm.state_size")),
                    linear_num_key_heads=int(g("ssm.group_count")), linear_num_value_heads=nv,
                    linear_value_head_dim=int(g("ssm.inner_size")) // nv, layer_types=layer_types,
                    **common), n_mtp
    raise SystemExit(f"unsupported architecture {arch}")


def build_from_gguf(path):
    kv, tensors, types = read_gguf(path)
    cfg, n_mtp = config_from_gguf(kv, tensors)
    model = gc.model_from_config_dict(dict(cfg))
    mt, n_layer = cfg["model_type"], cfg["num_hidden_layers"]
    sd = {}
    for gname, w in tensors.items():
        hf = gn.gguf_to_hf_name(gname, mt, n_layer)
        sd[hf] = torch.from_numpy(np.array(gn.from_gguf_tensor(hf, w, cfg), dtype=np.float32))
    gc.load_weights(model, {k: v for k, v in sd.items() if not k.startswith("mtp.")})
    mtp = None
    if n_mtp:
        mtp = MTPHead(model.config)
        load_mtp_from_state_dict(mtp, sd)
        mtp.float().eval()
    return model, mtp, types, kv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf")
    ap.add_argument("out_dir")
    ap.add_argument("--stem", default=None)
    ap.add_argument("--lengths", default=",".join(map(str, gc.PROMPT_LENGTHS)))
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="extra string entry for the sidecar (e.g. how the GGUF was made); repeatable")
    ap.add_argument("--layer-states", action="store_true",
                    help="also store each layer's residual at the last position (pL.layer_last) and the top-5")
    a = ap.parse_args()
    torch.set_num_threads(1)
    model, mtp, types, kv = build_from_gguf(a.gguf)
    stem = a.stem or "golden-" + os.path.splitext(os.path.basename(a.gguf))[0]
    n = gc.write_goldens(model, mtp, a.out_dir, stem,
                         {"model": str(kv.get("general.name", "")), "source": "gguf-dequantized",
                          "gguf": os.path.basename(a.gguf), "gguf_tensor_types": types,
                          **dict(m.split("=", 1) for m in a.meta)},
                         lengths=[int(x) for x in a.lengths.split(",")], layer_states=a.layer_states)
    print(f"{a.out_dir}/{stem}.bin: {n} bytes; tensor types {types}")


if __name__ == "__main__":
    main()
