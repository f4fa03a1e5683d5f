"""Reference PyTorch implementation of the Qwen3.5 MTP (multi-token prediction) head.

Written for Cairn from the architecture description in
shared/reference/hybrid-architectures.md section 1.7. transformers ignores the
`mtp.*` tensors of Qwen3.5 checkpoints, so this module provides the math used
both to train Cairn's default model's MTP head and to produce golden MTP logits.

One MTP step, for a row i of the main model's sequence:
    e   = embed_tokens(x[i+1])                      (shared with the main model)
    h   = main model hidden state at position i, AFTER the final norm (model.norm)
    z   = mtp.fc( concat( RMSNorm1p_e(e), RMSNorm1p_h(h) ) )   embedding half first
    z   = one gated full-attention decoder layer (mtp.layers.0.*) at position i,
          causal attention over the MTP rows 0..i (its own KV cache)
    out = lm_head( RMSNorm1p(z; mtp.norm) )         -> logits for x[i+2]
RMSNorm1p is the zero-centred norm x/rms(x) * (1 + w).

Tensor names (exactly the real checkpoints'):
    mtp.fc.weight [H, 2H], mtp.pre_fc_norm_embedding.weight [H],
    mtp.pre_fc_norm_hidden.weight [H], mtp.norm.weight [H],
    mtp.layers.0.input_layernorm.weight, mtp.layers.0.post_attention_layernorm.weight,
    mtp.layers.0.self_attn.{q_proj,k_proj,v_proj,o_proj,q_norm,k_norm}.weight,
    mtp.layers.0.mlp.{gate_proj,up_proj,down_proj}.weight
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm1p(nn.Module):
    """Zero-centred RMSNorm: y = x / sqrt(mean(x^2) + eps) * (1 + w), in fp32."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * (1.0 + self.weight.float())).type_as(x)


def rope_inv_freq(cfg) -> torch.Tensor:
    rp = cfg.rope_parameters
    rd = int(cfg.head_dim * rp.get("partial_rotary_factor", 1.0))
    return 1.0 / (rp["rope_theta"] ** (torch.arange(0, rd, 2, dtype=torch.float32) / rd))


def apply_partial_rope(x, pos, inv_freq):
    """x: [B, heads, T, hd]; NeoX rotate-half inside the first rd dims."""
    rd = inv_freq.numel() * 2
    ang = pos.float()[:, None] * inv_freq[None, :]  # [T, rd/2]
    cos = torch.cat([ang.cos(), ang.cos()], -1).to(x.dtype)
    sin = torch.cat([ang.sin(), ang.sin()], -1).to(x.dtype)
    xr, xp = x[..., :rd], x[..., rd:]
    x1, x2 = xr[..., : rd // 2], xr[..., rd // 2:]
    rot = torch.cat([-x2, x1], -1)
    return torch.cat([xr * cos + rot * sin, xp], -1)


class GatedAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        H, hd = cfg.hidden_size, cfg.head_dim
        self.nq, self.nkv, self.hd = cfg.num_attention_heads, cfg.num_key_value_heads, hd
        self.q_proj = nn.Linear(H, self.nq * hd * 2, bias=False)
        self.k_proj = nn.Linear(H, self.nkv * hd, bias=False)
        self.v_proj = nn.Linear(H, self.nkv * hd, bias=False)
        self.o_proj = nn.Linear(self.nq * hd, H, bias=False)
        self.q_norm = RMSNorm1p(hd, cfg.rms_norm_eps)
        self.k_norm = RMSNorm1p(hd, cfg.rms_norm_eps)
        self.register_buffer("inv_freq", rope_inv_freq(cfg), persistent=False)

    def forward(self, x, pos):
        B, T, _ = x.shape
        qg = self.q_proj(x).view(B, T, self.nq, 2 * self.hd)
        q, gate = qg[..., : self.hd], qg[..., self.hd:]  # per-head interleave [q_h | gate_h]
        gate = gate.reshape(B, T, self.nq * self.hd)
        q = self.q_norm(q).transpose(1, 2)
        k = self.k_norm(self.k_proj(x).view(B, T, self.nkv, self.hd)).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.nkv, self.hd).transpose(1, 2)
        q = apply_partial_rope(q, pos, self.inv_freq)
        k = apply_partial_rope(k, pos, self.inv_freq)
        rep = self.nq // self.nkv
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.hd ** -0.5)
        o = o.transpose(1, 2).reshape(B, T, self.nq * self.hd)
        return self.o_proj(o * torch.sigmoid(gate))


class MLP(nn.Module):
    def __init__(self, H, F_):
        super().__init__()
        self.gate_proj = nn.Linear(H, F_, bias=False)
        self.up_proj = nn.Linear(H, F_, bias=False)
        self.down_proj = nn.Linear(F_, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MTPLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm1p(cfg.hidden_size, cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm1p(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = GatedAttention(cfg)
        self.mlp = MLP(cfg.hidden_size, cfg.intermediate_size)

    def forward(self, x, pos):
        x = x + self.self_attn(self.input_layernorm(x), pos)
        return x + self.mlp(self.post_attention_layernorm(x))


class MTPHead(nn.Module):
    """Module whose state_dict keys, prefixed with 'mtp.', are the real checkpoint names."""

    def __init__(self, cfg):
        super().__init__()
        H = cfg.hidden_size
        self.pre_fc_norm_embedding = RMSNorm1p(H, cfg.rms_norm_eps)
        self.pre_fc_norm_hidden = RMSNorm1p(H, cfg.rms_norm_eps)
        self.fc = nn.Linear(2 * H, H, bias=False)
        self.layers = nn.ModuleList([MTPLayer(cfg)])
        self.norm = RMSNorm1p(H, cfg.rms_norm_eps)

    def forward(self, hidden, next_emb, pos=None):
        """hidden: [B,T,H] main hidden states (post final norm) at rows 0..T-1;
        next_emb: [B,T,H] embeddings of the tokens at rows 1..T.
        Returns the MTP output hidden state after mtp.norm ([B,T,H]); apply lm_head for logits."""
        T = hidden.shape[1]
        if pos is None:
            pos = torch.arange(T)
        z = self.fc(torch.cat([self.pre_fc_norm_embedding(next_emb), self.pre_fc_norm_hidden(hidden)], -1))
        for layer in self.layers:
            z = layer(z, pos)
        return self.norm(z)


def mtp_state_dict(head: MTPHead) -> dict:
    return {"mtp." + k: v for k, v in head.state_dict().items()}


def load_mtp_from_state_dict(head: MTPHead, sd: dict) -> None:
    head.load_state_dict({k[4:]: v.float() for k, v in sd.items() if k.startswith("mtp.")})
