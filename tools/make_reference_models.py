#!/usr/bin/env python3
"""Create Cairn's tiny random-initialised reference models and their golden outputs.

    python3 tools/make_reference_models.py [--out tests/model/golden] [--noise]

Writes tests/model/golden/<name>/{config.json, model.safetensors, generation_config.json,
golden.bin, golden.json} for
  llama-tiny   LlamaForCausalLM,   untied output head
  qwen3-tiny   Qwen3ForCausalLM,   per-head q/k norm, tied output head
  qwen35-tiny  Qwen3_5ForCausalLM  (3 Gated DeltaNet + 1 gated attention), tied, with mtp.* weights
All weights are float32 and deterministic (fixed seeds). Needs torch + transformers >= 5.
--noise additionally measures the float32 noise floor (whole vs chunked prefill, sdpa vs eager).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cairn_mtp import MTPHead, mtp_state_dict  # noqa: E402
import golden_common as gc  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def configs():
    from transformers import LlamaConfig, Qwen3Config
    from transformers.models.qwen3_5 import Qwen3_5TextConfig
    return {
        "llama-tiny": LlamaConfig(
            vocab_size=512, hidden_size=64, intermediate_size=176, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
            rms_norm_eps=1e-5, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            tie_word_embeddings=False, attention_bias=False, mlp_bias=False,
            bos_token_id=1, eos_token_id=2, pad_token_id=None),
        "qwen3-tiny": Qwen3Config(
            vocab_size=1024, hidden_size=64, intermediate_size=192, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
            rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            tie_word_embeddings=True, use_sliding_window=False, attention_bias=False,
            bos_token_id=None, eos_token_id=2, pad_token_id=None),
        "qwen35-tiny": Qwen3_5TextConfig(
            vocab_size=1024, hidden_size=64, intermediate_size=192, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, head_dim=64,
            linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=32,
            linear_conv_kernel_dim=4, full_attention_interval=4,
            rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                             "mrope_section": [3, 3, 2], "mrope_interleaved": True},
            max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=True,
            bos_token_id=None, eos_token_id=2, pad_token_id=None),
    }


LIN_STD = 0.12   # every Linear weight
EMB_STD = 0.25   # embeddings and (untied) output head: logits std ~ 0.25*sqrt(64) = 2
NORM_STD = 0.1   # norm weights = default + N(0, 0.1)


@torch.no_grad()
def init_weights(model, mtp, seed):
    g = torch.Generator().manual_seed(seed)

    def normal(t, std, mean=0.0):
        t.copy_(torch.randn(t.shape, generator=g) * std + mean)

    zero_centred = model.config.model_type == "qwen3_5_text"
    mods = [("", model)] + ([("mtp.", mtp)] if mtp is not None else [])
    for prefix, mod in mods:
        for name, p in mod.named_parameters():
            full = prefix + name
            if full.endswith("embed_tokens.weight") or full == "lm_head.weight":
                normal(p, EMB_STD)
            elif full.endswith("conv1d.weight"):
                p.copy_(torch.rand(p.shape, generator=g) - 0.5)         # U(-0.5, 0.5) like nn.Conv1d's init
            elif full.endswith("A_log"):
                # real init: A ~ U(0.01, 16), A_log = log(A)
                p.copy_(torch.log(torch.rand(p.shape, generator=g) * (16 - 0.01) + 0.01))
            elif full.endswith("dt_bias"):
                # Mamba-style dt init: softplus(dt_bias) = dt ~ logU(1e-3, 1e-1)
                dt = torch.exp(torch.rand(p.shape, generator=g) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
                p.copy_(dt + torch.log(-torch.expm1(-dt)))
            elif full.endswith("linear_attn.norm.weight"):
                normal(p, NORM_STD, 1.0)                                  # plain RMSNorm (w)
            elif "norm" in full and p.dim() == 1:
                normal(p, NORM_STD, 0.0 if zero_centred else 1.0)        # (1+w) for Qwen3.5, w otherwise
            elif p.dim() == 2:
                normal(p, LIN_STD)
            else:
                raise ValueError(f"uninitialised parameter {full} {tuple(p.shape)}")
    if model.config.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight


def build(name, cfg, seed):
    from transformers import LlamaForCausalLM, Qwen3ForCausalLM
    from transformers.models.qwen3_5 import Qwen3_5ForCausalLM
    cls = {"llama": LlamaForCausalLM, "qwen3": Qwen3ForCausalLM, "qwen3_5_text": Qwen3_5ForCausalLM}[cfg.model_type]
    torch.manual_seed(seed)
    model = cls(cfg).float().eval()
    mtp = MTPHead(cfg).float().eval() if cfg.model_type == "qwen3_5_text" else None
    init_weights(model, mtp, seed)
    return model, mtp


def save_dir(model, mtp, out):
    from safetensors.torch import save_file
    os.makedirs(out, exist_ok=True)
    tied = model.config.tie_word_embeddings
    sd = {k: v.detach().float().contiguous() for k, v in model.state_dict().items()
          if not (tied and k == "lm_head.weight")}
    if mtp is not None:
        sd.update({k: v.detach().float().contiguous() for k, v in mtp_state_dict(mtp).items()})
    save_file(dict(sorted(sd.items())), os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    os.chmod(os.path.join(out, "model.safetensors"), 0o644)
    cd = model.config.to_dict()
    cd["architectures"] = [type(model).__name__]
    cd["dtype"] = "float32"
    cd.pop("torch_dtype", None)
    if cd.get("model_type") == "qwen3_5_text":
        lt = cd["layer_types"]
        cd["full_attention_interval"] = lt.index("full_attention") + 1
    if mtp is not None:
        cd["mtp_num_hidden_layers"] = 1
        cd["mtp_use_dedicated_embeddings"] = False
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cd, f, indent=2, sort_keys=True)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": cd.get("eos_token_id"), "do_sample": False}, f, indent=2)
    return sum(v.numel() for v in sd.values())


@torch.no_grad()
def noise_floor(model, L=300):
    """Max |Δlogit| between float32 CPU runs that differ only in batching / kernels."""
    V = model.config.vocab_size
    ids = gc.prompt_ids(L, V)
    full, _ = gc.run_full(model, ids)
    res = {}
    for label, chunks in (("chunks_1x20_then_37", [1] * 20 + [37] * 20), ("chunks_64", [64] * 10),
                          ("chunks_7", [7] * 100)):
        ch = gc.run_chunked(model, ids, chunks)
        res[label] = float((ch - full).abs().max())
        res[label + "_argmax_mismatch"] = int((ch.argmax(-1) != full.argmax(-1)).sum())
    impl = model.config._attn_implementation
    model.config._attn_implementation = "eager"
    for m in model.modules():
        if hasattr(m, "config"):
            m.config._attn_implementation = "eager"
    eager, _ = gc.run_full(model, ids)
    model.config._attn_implementation = impl
    res["eager_vs_" + str(impl)] = float((eager - full).abs().max())
    torch.set_num_threads(2)
    two, _ = gc.run_full(model, ids)
    torch.set_num_threads(1)
    res["threads2_vs_1"] = float((two - full).abs().max())
    res["logits_absmax"] = float(full.abs().max())
    return res


@torch.no_grad()
def check_mtp_against_hf_layer(model, mtp):
    """Cross-check cairn_mtp's explicit attention layer against transformers' Qwen3_5DecoderLayer."""
    from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5DecoderLayer, Qwen3_5TextRotaryEmbedding
    import copy
    cfg = copy.deepcopy(model.config)
    cfg.layer_types = ["full_attention"]
    cfg.num_hidden_layers = 1
    cfg._attn_implementation = "sdpa"
    layer = Qwen3_5DecoderLayer(cfg, 0).float().eval()
    layer.load_state_dict(mtp.layers[0].state_dict())
    rot = Qwen3_5TextRotaryEmbedding(cfg)
    T = 50
    x = torch.randn(1, T, cfg.hidden_size, generator=torch.Generator().manual_seed(0))
    pos = torch.arange(T)[None]
    pe = rot(x, pos[None].expand(3, 1, T))
    from transformers.masking_utils import create_causal_mask
    mask = create_causal_mask(config=cfg, inputs_embeds=x, attention_mask=None, cache=None, position_ids=pos)
    ref = layer(x, position_embeddings=pe, attention_mask=mask, position_ids=pos)
    if isinstance(ref, tuple):
        ref = ref[0]
    mine = mtp.layers[0](x, torch.arange(T))
    return float((ref - mine).abs().max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "model", "golden"))
    ap.add_argument("--noise", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--no-gguf", action="store_true", help="skip the Q8_0 GGUF reference for qwen35-tiny")
    a = ap.parse_args()
    torch.set_num_threads(1)
    report = {}
    for i, (name, cfg) in enumerate(configs().items()):
        if a.only and name != a.only:
            continue
        model, mtp = build(name, cfg, seed=4242 + i)
        out = os.path.join(a.out, name)
        n = save_dir(model, mtp, out)
        # reload from disk so the goldens come from exactly the committed weights
        model, mtp = gc.load_hf_dir(out)
        nbytes = gc.write_goldens(model, mtp, out, "golden", {"model": name, "source": "hf-float32",
                                                              "weights": "model.safetensors"})
        r = {"params_stored": n, "golden_bytes": nbytes}
        if mtp is not None:
            r["mtp_layer_vs_hf_decoder_layer_maxabs"] = check_mtp_against_hf_layer(model, mtp)
        if mtp is not None and not a.no_gguf:
            # quantized reference: Q8_0 GGUF (llama.cpp naming) + goldens of HF running its dequantized weights
            import golden_from_gguf as gg
            import hf_to_gguf_reference as h2g
            gpath = os.path.join(out, "model-q8_0.gguf")
            r["gguf_types"] = h2g.write_gguf(out, gpath, "q8_0", name)
            qm, qmtp, types, _ = gg.build_from_gguf(gpath)
            r["golden_q8_0_bytes"] = gc.write_goldens(
                qm, qmtp, out, "golden-q8_0",
                {"model": name, "source": "gguf-dequantized", "gguf": "model-q8_0.gguf", "gguf_tensor_types": types},
                lengths=[1, 7, 64, 300])
        if a.noise:
            r["noise"] = noise_floor(model)
        report[name] = r
        print(name, json.dumps(r), flush=True)
    if a.noise:
        with open(os.path.join(a.out, "noise_floor.json"), "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
