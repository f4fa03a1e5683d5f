"""Shared helpers for Cairn's golden-logit tools (make_reference_models.py, golden_from_gguf.py).

Golden format ("cairn-golden-v1", see tests/model/golden/README.md): one little-endian binary
file holding raw arrays back to back (each 64-byte aligned) plus a JSON sidecar that names every
array with its dtype ("f32" / "i32"), shape (row-major) and byte offset.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cairn_mtp import MTPHead, load_mtp_from_state_dict  # noqa: E402

PROMPT_LENGTHS = [1, 7, 64, 300, 2000]
N_COLS = 64
COLS_SEED = 7


def prompt_ids(length: int, vocab: int) -> np.ndarray:
    """Deterministic pseudo-random prompt: numpy RandomState(1000 + length).randint(0, vocab, length)."""
    return np.random.RandomState(1000 + length).randint(0, vocab, size=length).astype(np.int32)


def golden_columns(vocab: int) -> np.ndarray:
    """The fixed 64 vocab columns: sorted RandomState(7).choice(vocab, 64, replace=False)."""
    return np.sort(np.random.RandomState(COLS_SEED).choice(vocab, size=N_COLS, replace=False)).astype(np.int32)


class GoldenWriter:
    def __init__(self):
        self.blobs = []
        self.arrays = {}
        self.off = 0

    def add(self, name: str, arr) -> None:
        if isinstance(arr, torch.Tensor):
            arr = arr.detach().cpu().numpy()
        arr = np.asarray(arr)
        if arr.dtype.kind == "f":
            arr, dt = arr.astype("<f4"), "f32"
        else:
            arr, dt = arr.astype("<i4"), "i32"
        pad = (-self.off) % 64
        if pad:
            self.blobs.append(b"\0" * pad)
            self.off += pad
        b = arr.tobytes(order="C")
        self.arrays[name] = {"dtype": dt, "shape": list(arr.shape), "offset": self.off, "nbytes": len(b)}
        self.blobs.append(b)
        self.off += len(b)

    def write(self, out_dir: str, stem: str, meta: dict) -> None:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, stem + ".bin"), "wb") as f:
            for b in self.blobs:
                f.write(b)
        meta = dict(meta)
        meta["format"] = "cairn-golden-v1"
        meta["bin"] = stem + ".bin"
        meta["arrays"] = self.arrays
        with open(os.path.join(out_dir, stem + ".json"), "w") as f:
            json.dump(meta, f, indent=1)


@torch.no_grad()
def run_full(model, ids: np.ndarray, layer_states: list | None = None):
    """One whole-prompt forward. Returns (logits [L,V], final-norm hidden [L,H]). When `layer_states` is
    a list, it receives each decoder layer's output (the residual stream, [L,H]) in layer order."""
    x = torch.from_numpy(ids.astype(np.int64))[None]
    hooks = []
    if layer_states is not None:
        def keep(_module, _inputs, output):
            layer_states.append((output[0] if isinstance(output, tuple) else output)[0].detach().clone())
        hooks = [layer.register_forward_hook(keep) for layer in model.model.layers]
    try:
        out = model.model(input_ids=x, use_cache=False)
    finally:
        for hk in hooks:
            hk.remove()
    h = out.last_hidden_state[0]
    return model.lm_head(h), h


@torch.no_grad()
def run_chunked(model, ids: np.ndarray, chunks):
    """Forward in consecutive chunks with the HF cache (chunked prefill); returns logits [L,V]."""
    from transformers import DynamicCache
    x = torch.from_numpy(ids.astype(np.int64))[None]
    cache = DynamicCache(config=model.config)
    outs, pos = [], 0
    for c in chunks:
        if pos >= x.shape[1]:
            break
        o = model(input_ids=x[:, pos:pos + c], past_key_values=cache, use_cache=True)
        cache = getattr(o, "cache", None) or getattr(o, "past_key_values", None) or cache
        outs.append(o.logits[0])
        pos += c
    return torch.cat(outs, 0)


@torch.no_grad()
def mtp_goldens(model, mtp, ids: np.ndarray, h: torch.Tensor, logits: torch.Tensor):
    """MTP over the whole prompt. Row i (0..L-1) uses h[i] (post final norm) and the embedding of
    token i+1, where token L is the main model's greedy next token; row i predicts token i+2.
    Then one recursive step: row L uses the MTP's own output hidden of row L-1 (after mtp.norm) and
    the embedding of the row-(L-1) MTP greedy draft, at position L."""
    L = len(ids)
    nxt = int(logits[-1].argmax())
    toks = np.concatenate([ids[1:], [nxt]]).astype(np.int64)
    e = model.model.embed_tokens(torch.from_numpy(toks)[None])
    mh = mtp(h[None], e)[0]                     # [L, H], after mtp.norm
    ml = model.lm_head(mh)                      # [L, V]
    d1 = int(ml[-1].argmax())
    # step 2 (recursive): append row L
    h2 = torch.cat([h, mh[-1:]], 0)
    toks2 = np.concatenate([toks, [d1]])
    e2 = model.model.embed_tokens(torch.from_numpy(toks2)[None])
    mh2 = mtp(h2[None], e2)[0]
    ml2 = model.lm_head(mh2[-1])
    return {"mtp_tokens": toks.astype(np.int32), "mtp_logits": ml, "mtp_hidden_last": mh[-1],
            "mtp_step2_token": np.array([d1], np.int32), "mtp_step2_logits": ml2,
            "mtp_step2_check_rows": float((mh2[:L] - mh).abs().max())}


def write_goldens(model, mtp, out_dir: str, stem: str, meta: dict, lengths=PROMPT_LENGTHS, layer_states=False):
    V = model.config.vocab_size
    cols = golden_columns(V)
    colsT = torch.from_numpy(cols.astype(np.int64))
    w = GoldenWriter()
    w.add("columns", cols)
    prompts = []
    for L in lengths:
        ids = prompt_ids(L, V)
        layers = [] if layer_states else None
        logits, h = run_full(model, ids, layers)
        p = f"p{L}"
        if layer_states:
            # residual stream after each decoder layer, last position: [n_layers, H]
            w.add(p + ".layer_last", torch.stack([t[-1] for t in layers]))
            lp = torch.log_softmax(logits[-1].double(), -1)
            top = lp.topk(5)
            w.add(p + ".top5_ids", top.indices.to(torch.int32))
            w.add(p + ".top5_logprobs", top.values.float())
        w.add(p + ".ids", ids)
        w.add(p + ".last_logits", logits[-1])
        w.add(p + ".cols_logits", logits[:, colsT])
        w.add(p + ".argmax", logits.argmax(-1).to(torch.int32))
        top2 = logits.topk(2, -1).values
        w.add(p + ".top2_gap", top2[:, 0] - top2[:, 1])
        w.add(p + ".last_hidden", h[-1])
        entry = {"name": p, "length": L, "last_logits_std": float(logits[-1].std()),
                 "min_top2_gap": float((lambda t: (t[:, 0] - t[:, 1]).min())(logits.topk(2, -1).values))}
        if mtp is not None:
            m = mtp_goldens(model, mtp, ids, h, logits)
            w.add(p + ".mtp_tokens", m["mtp_tokens"])
            w.add(p + ".mtp_last_logits", m["mtp_logits"][-1])
            w.add(p + ".mtp_cols_logits", m["mtp_logits"][:, colsT])
            w.add(p + ".mtp_argmax", m["mtp_logits"].argmax(-1).to(torch.int32))
            mt2 = m["mtp_logits"].topk(2, -1).values
            w.add(p + ".mtp_top2_gap", mt2[:, 0] - mt2[:, 1])
            w.add(p + ".mtp_last_hidden", m["mtp_hidden_last"])
            w.add(p + ".mtp_step2_token", m["mtp_step2_token"])
            w.add(p + ".mtp_step2_logits", m["mtp_step2_logits"])
        prompts.append(entry)
    meta = dict(meta)
    meta.update({"vocab_size": V, "hidden_size": model.config.hidden_size, "prompts": prompts,
                 "has_mtp": mtp is not None,
                 "prompt_rule": "ids = numpy.random.RandomState(1000 + L).randint(0, vocab_size, L)",
                 "columns_rule": "sorted(numpy.random.RandomState(7).choice(vocab_size, 64, replace=False))"})
    w.write(out_dir, stem, meta)
    return w.off


def load_hf_dir(path: str):
    """Load a Cairn golden/default HF directory in float32: (model, mtp_or_None)."""
    from safetensors.torch import load_file
    with open(os.path.join(path, "config.json")) as f:
        cd = json.load(f)
    sd = load_file(os.path.join(path, "model.safetensors"))
    model = model_from_config_dict(cd)
    load_weights(model, {k: v for k, v in sd.items() if not k.startswith("mtp.")})
    mtp = None
    if any(k.startswith("mtp.") for k in sd):
        mtp = MTPHead(model.config)
        load_mtp_from_state_dict(mtp, sd)
        mtp.float().eval()
    return model, mtp


def model_from_config_dict(cd: dict):
    cd = {k: v for k, v in cd.items() if not k.startswith("mtp_")}
    mt = cd["model_type"]
    if mt == "qwen3_5_text":
        from transformers.models.qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5TextConfig
        return Qwen3_5ForCausalLM(Qwen3_5TextConfig(**cd)).float().eval()
    if mt == "qwen3":
        from transformers import Qwen3Config, Qwen3ForCausalLM
        return Qwen3ForCausalLM(Qwen3Config(**cd)).float().eval()
    if mt == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM
        return LlamaForCausalLM(LlamaConfig(**cd)).float().eval()
    raise ValueError(mt)


def load_weights(model, sd: dict) -> None:
    sd = {k: v.float() for k, v in sd.items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    tied = model.config.tie_word_embeddings
    bad = [k for k in missing if not (tied and k == "lm_head.weight")]
    if bad or unexpected:
        raise ValueError(f"missing {bad} unexpected {unexpected}")
    if tied:
        model.lm_head.weight = model.model.embed_tokens.weight
