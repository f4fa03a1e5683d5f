"""HF <-> GGUF tensor-name and layout mapping for llama / qwen3 / qwen35, following the conventions
llama.cpp's converter uses (shared/reference/llama-cpp-notes.md section 3). Used only by Cairn's Python
test oracles (hf_to_gguf_reference.py, golden_from_gguf.py); the product converter is `cairn convert`.

Transforms HF -> GGUF:
  llama : attn_q / attn_k rows permuted from HF rotate-half order to llama.cpp's interleaved-pair order
  qwen35: every "*norm.weight" except linear_attn.norm gets +1; A_log -> ssm_a = -exp(A_log);
          dt_bias -> ssm_dt.bias; conv1d [C,1,K] -> [C,K]; V heads re-ordered grouped -> tiled when
          Hv > Hk (v rows of attn_qkv / conv, attn_gate, ssm_beta, ssm_alpha, ssm_a, ssm_dt, ssm_out cols);
          mtp.* -> blk.{n_layer}.nextn.{eh_proj,enorm,hnorm,shared_head_norm} + blk.{n_layer}.<attention layer>
"""
from __future__ import annotations

import re

import numpy as np

ARCH = {"llama": "llama", "qwen3": "qwen3", "qwen3_5_text": "qwen35"}

COMMON = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "linear_attn.in_proj_qkv.weight": "attn_qkv.weight",
    "linear_attn.in_proj_z.weight": "attn_gate.weight",
    "linear_attn.in_proj_b.weight": "ssm_beta.weight",
    "linear_attn.in_proj_a.weight": "ssm_alpha.weight",
    "linear_attn.conv1d.weight": "ssm_conv1d.weight",
    "linear_attn.dt_bias": "ssm_dt.bias",
    "linear_attn.A_log": "ssm_a",
    "linear_attn.norm.weight": "ssm_norm.weight",
    "linear_attn.out_proj.weight": "ssm_out.weight",
}
MTP_TOP = {"fc.weight": "nextn.eh_proj.weight", "pre_fc_norm_embedding.weight": "nextn.enorm.weight",
           "pre_fc_norm_hidden.weight": "nextn.hnorm.weight", "norm.weight": "nextn.shared_head_norm.weight"}


def post_attn_name(model_type):
    return "post_attention_norm.weight" if model_type == "qwen3_5_text" else "ffn_norm.weight"


def hf_to_gguf_name(name: str, model_type: str, n_layer: int) -> str:
    if name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if name == "model.norm.weight":
        return "output_norm.weight"
    if name == "lm_head.weight":
        return "output.weight"
    m = re.match(r"model\.layers\.(\d+)\.(.+)$", name)
    if m:
        bid, rest = int(m.group(1)), m.group(2)
    else:
        m = re.match(r"mtp\.layers\.(\d+)\.(.+)$", name)
        if m:
            bid, rest = n_layer + int(m.group(1)), m.group(2)
        elif name.startswith("mtp.") and name[4:] in MTP_TOP:
            return f"blk.{n_layer}.{MTP_TOP[name[4:]]}"
        else:
            raise KeyError(name)
    if rest == "post_attention_layernorm.weight":
        return f"blk.{bid}.{post_attn_name(model_type)}"
    return f"blk.{bid}.{COMMON[rest]}"


def gguf_to_hf_name(name: str, model_type: str, n_layer: int) -> str:
    if name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if name == "output_norm.weight":
        return "model.norm.weight"
    if name == "output.weight":
        return "lm_head.weight"
    m = re.match(r"blk\.(\d+)\.(.+)$", name)
    if not m:
        raise KeyError(name)
    bid, rest = int(m.group(1)), m.group(2)
    if bid >= n_layer:
        for k, v in MTP_TOP.items():
            if rest == v:
                return "mtp." + k
        pre = f"mtp.layers.{bid - n_layer}."
    else:
        pre = f"model.layers.{bid}."
    if rest == post_attn_name(model_type):
        return pre + "post_attention_layernorm.weight"
    inv = {v: k for k, v in COMMON.items()}
    return pre + inv[rest]


# ---- llama q/k permutation (HF rotate-half -> llama.cpp interleaved pairs)

def llama_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama_unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


# ---- Qwen3.5 V-head order: HF grouped (head = k*r + j) <-> GGUF tiled (position = j*Hk + k)

def v_reorder(t: np.ndarray, axis: int, n_k: int, r: int, hd: int, inverse: bool = False) -> np.ndarray:
    shape = list(t.shape)
    a = axis % len(shape)
    first, second = (r, n_k) if inverse else (n_k, r)
    t = t.reshape(shape[:a] + [first, second, hd] + shape[a + 1:])
    t = np.swapaxes(t, a, a + 1)
    return np.ascontiguousarray(t).reshape(shape)


def is_zero_centred_norm(hf_name: str) -> bool:
    return hf_name.endswith("norm.weight") and not hf_name.endswith("linear_attn.norm.weight")


def to_gguf_tensor(hf_name: str, w: np.ndarray, cfg: dict) -> np.ndarray:
    mt = cfg["model_type"]
    if mt == "llama":
        if hf_name.endswith("self_attn.q_proj.weight"):
            w = llama_permute(w, cfg["num_attention_heads"])
        elif hf_name.endswith("self_attn.k_proj.weight"):
            w = llama_permute(w, cfg["num_key_value_heads"])
    if mt != "qwen3_5_text":
        return w
    if is_zero_centred_norm(hf_name):
        w = w + 1.0
    nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    if "linear_attn." in hf_name:
        if hf_name.endswith("A_log"):
            w = -np.exp(w)
        if hf_name.endswith("conv1d.weight"):
            w = w.reshape(w.shape[0], w.shape[-1])
        if nv != nk:
            r = nv // nk
            if ".in_proj_qkv." in hf_name or ".conv1d." in hf_name:
                qk = 2 * nk * dk
                w = np.concatenate([w[:qk], v_reorder(w[qk:], 0, nk, r, dv)], 0)
            elif ".in_proj_z." in hf_name:
                w = v_reorder(w, 0, nk, r, dv)
            elif ".in_proj_a." in hf_name or ".in_proj_b." in hf_name or hf_name.endswith(("A_log", "dt_bias")):
                w = v_reorder(w, 0, nk, r, 1)
            elif ".out_proj." in hf_name:
                w = v_reorder(w, 1, nk, r, dv)
    return w


def from_gguf_tensor(hf_name: str, w: np.ndarray, cfg: dict) -> np.ndarray:
    """Inverse of to_gguf_tensor (on dequantized float32 data)."""
    mt = cfg["model_type"]
    if mt == "llama":
        if hf_name.endswith("self_attn.q_proj.weight"):
            w = llama_unpermute(w, cfg["num_attention_heads"])
        elif hf_name.endswith("self_attn.k_proj.weight"):
            w = llama_unpermute(w, cfg["num_key_value_heads"])
    if mt != "qwen3_5_text":
        return w
    if is_zero_centred_norm(hf_name):
        w = w - 1.0
    nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
    if "linear_attn." in hf_name:
        if nv != nk:
            r = nv // nk
            if ".in_proj_qkv." in hf_name or ".conv1d." in hf_name:
                qk = 2 * nk * dk
                w = np.concatenate([w[:qk], v_reorder(w[qk:], 0, nk, r, dv, inverse=True)], 0)
            elif ".in_proj_z." in hf_name:
                w = v_reorder(w, 0, nk, r, dv, inverse=True)
            elif ".in_proj_a." in hf_name or ".in_proj_b." in hf_name or hf_name.endswith(("A_log", "dt_bias")):
                w = v_reorder(w, 0, nk, r, 1, inverse=True)
            elif ".out_proj." in hf_name:
                w = v_reorder(w, 1, nk, r, dv, inverse=True)
        if hf_name.endswith("A_log"):
            w = np.log(-w)
        if hf_name.endswith("conv1d.weight"):
            w = w.reshape(w.shape[0], 1, w.shape[-1])
    return w


# ---- Q4_K quantizer (gguf-py only dequantizes Q4_K). Simple min/max per 32-element sub-block;
# valid ggml block_q4_K layout, not llama.cpp's error-minimising search.

def quantize_q4_k(x: np.ndarray) -> np.ndarray:
    shape = x.shape
    assert shape[-1] % 256 == 0
    b = x.reshape(-1, 8, 32).astype(np.float32)              # [nblk, sub, 32]
    xmin = np.minimum(b.min(-1), 0.0)
    xmax = b.max(-1)
    scale = (xmax - xmin) / 15.0                            # [nblk, 8]
    mins = -xmin
    d = (scale.max(-1) / 63.0).astype(np.float16)
    dmin = (mins.max(-1) / 63.0).astype(np.float16)
    df, dmf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    sc = np.clip(np.round(np.divide(scale, df, out=np.zeros_like(scale), where=df > 0)), 0, 63).astype(np.uint8)
    mq = np.clip(np.round(np.divide(mins, dmf, out=np.zeros_like(mins), where=dmf > 0)), 0, 63).astype(np.uint8)
    step = (df * sc)[..., None]
    off = (dmf * mq)[..., None]
    q = np.clip(np.round(np.divide(b + off, step, out=np.zeros_like(b), where=step > 0)), 0, 15).astype(np.uint8)
    n = b.shape[0]
    scales = np.zeros((n, 12), np.uint8)
    for j in range(4):
        scales[:, j] = (sc[:, j] & 63) | ((sc[:, j + 4] >> 4) << 6)
        scales[:, j + 4] = (mq[:, j] & 63) | ((mq[:, j + 4] >> 4) << 6)
        scales[:, j + 8] = (sc[:, j + 4] & 15) | ((mq[:, j + 4] & 15) << 4)
    q = q.reshape(n, 4, 2, 32)                               # [blk, group of 64, lo/hi, 32]
    qs = (q[:, :, 0, :] | (q[:, :, 1, :] << 4)).reshape(n, 128)
    out = np.concatenate([d.view(np.uint8).reshape(n, 2), dmin.view(np.uint8).reshape(n, 2), scales, qs], 1)
    return out.reshape(*shape[:-1], shape[-1] // 256 * 144)
