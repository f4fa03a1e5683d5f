#!/usr/bin/env python3
"""TEST ORACLE ONLY: write a GGUF from a Cairn HF directory with the `gguf` Python package, using
llama.cpp's tensor names, shapes and transforms for llama / qwen3 / qwen35 (incl. the Qwen3.5 MTP
block as blk.{n_layer}.nextn.*).  The product converter is the C++ `cairn convert`; this script
exists to give the C++ loader reference files and golden_from_gguf.py something to read.

    python3 tools/hf_to_gguf_reference.py HF_DIR OUT.gguf --type {f32,f16,q8_0,q4_k}

Type policy: 1-D tensors, *norm*, ssm_conv1d, ssm_a, ssm_dt stay F32. Other 2-D tensors get the
requested type when their row length allows it (q8_0: %32, q4_k: %256, else Q8_0 if %32, else F32).
Q4_K blocks come from tools/gguf_names.quantize_q4_k (simple min/max, valid ggml layout).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_names as gn  # noqa: E402

FTYPE = {"f32": 0, "f16": 1, "q8_0": 7, "q4_k": 15}   # llama_ftype (15 = MOSTLY_Q4_K_M)


def load_hf(path):
    from safetensors.torch import load_file
    sd = {k: v.float().numpy() for k, v in load_file(os.path.join(path, "model.safetensors")).items()}
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    return cfg, sd


def add_tokenizer(w, path, cfg):
    import gguf
    tj = os.path.join(path, "tokenizer.json")
    if not os.path.exists(tj):
        w.add_tokenizer_model("none")          # tiny golden models have no tokenizer
        return
    with open(tj) as f:
        t = json.load(f)
    vocab = t["model"]["vocab"]
    added = {a["id"]: a for a in t["added_tokens"]}
    V = cfg["vocab_size"]
    toks, types = [], []
    inv = {i: s for s, i in vocab.items()}
    for i in range(V):
        if i in added:
            toks.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i]["special"] else gguf.TokenType.USER_DEFINED)
        elif i in inv:
            toks.append(inv[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            toks.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in t["model"]["merges"]]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(toks)
    w.add_token_types(types)
    w.add_token_merges(merges)
    ids = {a["content"]: a["id"] for a in t["added_tokens"]}
    with open(os.path.join(path, "tokenizer_config.json")) as f:
        tc = json.load(f)
    if tc.get("eos_token") in ids:
        w.add_eos_token_id(ids[tc["eos_token"]])
    if tc.get("pad_token") in ids:
        w.add_pad_token_id(ids[tc["pad_token"]])
    if "<|endoftext|>" in ids:
        w.add_bos_token_id(ids["<|endoftext|>"])   # as llama.cpp does for Qwen (add_bos = false)
    w.add_add_bos_token(False)
    if tc.get("chat_template"):
        w.add_chat_template(tc["chat_template"])


def write_gguf(hf_dir, out, qtype="f32", name=None):
    import gguf
    cfg, sd = load_hf(hf_dir)
    mt = cfg["model_type"]
    arch = gn.ARCH[mt]
    n_layer = cfg["num_hidden_layers"]
    n_mtp = cfg.get("mtp_num_hidden_layers", 0) if any(k.startswith("mtp.") for k in sd) else 0
    w = gguf.GGUFWriter(out, arch)
    w.add_name(name or os.path.basename(os.path.normpath(hf_dir)))
    w.add_file_type(FTYPE[qtype])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    hd = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    rp = cfg.get("rope_parameters") or {"rope_theta": cfg.get("rope_theta", 10000.0)}
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(n_layer + n_mtp)
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(float(rp["rope_theta"]))
    w.add_vocab_size(cfg["vocab_size"])
    if mt == "qwen3_5_text":
        prf = rp.get("partial_rotary_factor", 0.25)
        w.add_rope_dimension_count(int(hd * prf))
        w.add_rope_dimension_sections(list(rp.get("mrope_section", [11, 11, 10])) + [0])
        w.add_ssm_conv_kernel(cfg["linear_conv_kernel_dim"])
        w.add_ssm_state_size(cfg["linear_key_head_dim"])
        w.add_ssm_group_count(cfg["linear_num_key_heads"])
        w.add_ssm_time_step_rank(cfg["linear_num_value_heads"])
        w.add_ssm_inner_size(cfg["linear_value_head_dim"] * cfg["linear_num_value_heads"])
        lt = cfg.get("layer_types")
        interval = 4
        if lt:
            fa = [i for i, x in enumerate(lt) if x == "full_attention"]
            interval = fa[0] + 1 if fa else n_layer + 1
        w.add_full_attention_interval(interval)
        if n_mtp:
            w.add_nextn_predict_layers(n_mtp)
    else:
        w.add_rope_dimension_count(hd)
    add_tokenizer(w, hf_dir, cfg)

    order = sorted(sd.keys(), key=lambda k: gn.hf_to_gguf_name(k, mt, n_layer))
    summary = {}
    for k in order:
        gname = gn.hf_to_gguf_name(k, mt, n_layer)
        t = np.ascontiguousarray(gn.to_gguf_tensor(k, sd[k], cfg).astype(np.float32))
        keep_f32 = t.ndim < 2 or "norm" in gname or "ssm_conv1d" in gname
        row = t.shape[-1]
        tt = "f32"
        if not keep_f32 and qtype != "f32":
            if qtype == "f16":
                tt = "f16"
            elif qtype == "q4_k" and row % 256 == 0:
                tt = "q4_k"
            elif row % 32 == 0:
                tt = "q8_0"
        if tt == "f32":
            w.add_tensor(gname, t)
        elif tt == "f16":
            w.add_tensor(gname, t.astype(np.float16))
        elif tt == "q8_0":
            w.add_tensor(gname, gguf.quants.quantize(t, gguf.GGMLQuantizationType.Q8_0),
                         raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            w.add_tensor(gname, gn.quantize_q4_k(t), raw_dtype=gguf.GGMLQuantizationType.Q4_K)
        summary[tt] = summary.get(tt, 0) + 1
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hf_dir")
    ap.add_argument("out")
    ap.add_argument("--type", default="f32", choices=list(FTYPE))
    ap.add_argument("--name", default=None)
    a = ap.parse_args()
    s = write_gguf(a.hf_dir, a.out, a.type, a.name)
    print(f"{a.out}: {os.path.getsize(a.out)} bytes, tensor types {s}")


if __name__ == "__main__":
    main()
