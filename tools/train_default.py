#!/usr/bin/env python3
"""Train Cairn's default models (a tiny Qwen3.5-hybrid code model with an MTP head,
and a tiny Qwen3 dense draft model sharing its vocabulary) on CPU.

Reproducible: fixed seeds, fixed step counts, file-level train/held-out split.
Needs torch, transformers (>= 5, for transformers.models.qwen3_5), tokenizers, safetensors.

    python3 tools/train_default.py prepare                 # corpus + tokenizer  (-> --work, models/cairn-default-hf/tokenizer*)
    python3 tools/train_default.py train --which main      # -> models/cairn-default-hf
    python3 tools/train_default.py train --which draft     # -> models/cairn-draft-hf
    python3 tools/train_default.py eval                    # -> docs/default-model.md numbers (printed + json)

Corpus: the Python standard library source of the running interpreter (tests, idlelib,
lib2to3, site-packages excluded) plus ChatML conversations synthesised from its
docstrings (train files only).  Held-out = files whose sha1(relative path) % 20 == 0.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import os
import random
import sys
import sysconfig
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cairn_mtp import MTPHead, mtp_state_dict, load_mtp_from_state_dict  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAIN_DIR = os.path.join(REPO, "models", "cairn-default-hf")
DRAFT_DIR = os.path.join(REPO, "models", "cairn-draft-hf")
SEED = 1234
DOC_OUT = "/tmp"
VOCAB = 6144
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]           # special=True (control)
ADDED = ["<think>", "</think>", "<tool_call>", "</tool_call>"]       # special=False (like Qwen3)
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")

CHAT_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
{{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}
{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content is defined and message.reasoning_content %}
{{- '<think>\n' + message.reasoning_content.strip('\n') + '\n</think>\n\n' }}
{%- endif %}
{%- if message.content is string %}{{- message.content }}{%- endif %}
{%- if message.tool_calls is defined and message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{%- set fn = tool_call.function if tool_call.function is defined else tool_call %}
{%- if not loop.first or (message.content is string and message.content) %}{{- '\n' }}{%- endif %}
{{- '<tool_call>\n{"name": "' + fn.name + '", "arguments": ' }}
{%- if fn.arguments is string %}{{- fn.arguments }}{%- else %}{{- fn.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{%- endif %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}"""


# ----------------------------------------------------------------------------- corpus

def stdlib_root() -> str:
    for p in ("/usr/lib/python3.11", sysconfig.get_paths()["stdlib"]):
        if os.path.isfile(os.path.join(p, "os.py")):
            return p
    raise SystemExit("no python stdlib found")


EXCLUDE_DIRS = {"site-packages", "dist-packages", "test", "tests", "idlelib", "lib2to3", "__pycache__",
                "config-3.11-x86_64-linux-gnu", "turtledemo"}


def list_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in EXCLUDE_DIRS)
        for f in sorted(files):
            if f.endswith(".py"):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def is_heldout(rel: str) -> bool:
    return int(hashlib.sha1(rel.encode()).hexdigest(), 16) % 20 == 0


def chat_samples(src: str, rng: random.Random):
    """ChatML conversations from docstrings: 'what does X do' -> docstring summary."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if not doc or len(doc) < 40 or node.name.startswith("_"):
                continue
            doc = doc.strip().split("\n\n")[0]
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            q = rng.choice([f"What does the {kind} `{node.name}` do?",
                            f"Explain `{node.name}`.",
                            f"Describe the Python {kind} {node.name}."])
            think = rng.random() < 0.5
            a = ("<think>\n\n</think>\n\n" if think else "") + doc
            out.append(f"<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n")
    return out


def load_corpus():
    root = stdlib_root()
    rng = random.Random(SEED)
    train, held = [], []
    for rel in list_files(root):
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                src = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        if len(src) < 200:
            continue
        if is_heldout(rel):
            held.append(src)
        else:
            train.append(src)
            train.extend(chat_samples(src, rng))
    return root, train, held


# ----------------------------------------------------------------------------- tokenizer

def train_tokenizer(texts, out_dir):
    from tokenizers import Tokenizer, Regex, AddedToken, decoders, models, normalizers, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE(byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB - len(SPECIALS) - len(ADDED), min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
                                  special_tokens=[])
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in ADDED])
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    os.makedirs(out_dir, exist_ok=True)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    ids = {s: tok.token_to_id(s) for s in SPECIALS + ADDED}
    added_decoder = {str(ids[s]): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                                   "single_word": False, "special": s in SPECIALS} for s in SPECIALS + ADDED}
    cfg = {
        "add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": added_decoder,
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "unk_token": None,
        "chat_template": CHAT_TEMPLATE, "clean_up_tokenization_spaces": False, "errors": "replace",
        "model_max_length": 4096, "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer",
    }
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump(cfg, f, indent=2, ensure_ascii=False)
    return tok


def copy_tokenizer(src_dir, dst_dir):
    os.makedirs(dst_dir, exist_ok=True)
    for n in ("tokenizer.json", "tokenizer_config.json"):
        with open(os.path.join(src_dir, n), "rb") as f, open(os.path.join(dst_dir, n), "wb") as g:
            g.write(f.read())


def tokenize_docs(tok, docs):
    eot = tok.token_to_id("<|endoftext|>")
    out = []
    for enc in tok.encode_batch(docs, add_special_tokens=False):
        out.extend(enc.ids)
        out.append(eot)
    return np.asarray(out, dtype=np.int16)


def cmd_prepare(a):
    root, train, held = load_corpus()
    print(f"stdlib {root}: {len(train)} train docs ({sum(map(len, train))/1e6:.2f} MB), "
          f"{len(held)} held-out files ({sum(map(len, held))/1e6:.2f} MB)")
    t0 = time.time()
    tok = train_tokenizer(train, MAIN_DIR)
    copy_tokenizer(MAIN_DIR, DRAFT_DIR)
    print(f"tokenizer trained in {time.time()-t0:.0f}s")
    os.makedirs(a.work, exist_ok=True)
    rng = random.Random(SEED)
    rng.shuffle(train)
    tr, he = tokenize_docs(tok, train), tokenize_docs(tok, held)
    np.save(os.path.join(a.work, "train.npy"), tr)
    np.save(os.path.join(a.work, "heldout.npy"), he)
    print(f"tokens: train {len(tr)}, held-out {len(he)}; bytes/token held-out "
          f"{sum(len(h.encode()) for h in held)/len(he):.2f}")


# ----------------------------------------------------------------------------- models

def main_config(vocab=VOCAB):
    from transformers.models.qwen3_5 import Qwen3_5TextConfig
    cfg = Qwen3_5TextConfig(
        vocab_size=vocab, hidden_size=256, intermediate_size=512, num_hidden_layers=8,
        num_attention_heads=4, num_key_value_heads=2, head_dim=64,
        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=64, linear_value_head_dim=64,
        linear_conv_kernel_dim=4, layer_types=None, full_attention_interval=4,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                         "mrope_section": [3, 3, 2], "mrope_interleaved": True},
        max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=True,
        initializer_range=0.02, bos_token_id=None, eos_token_id=2, pad_token_id=None,
    )
    return cfg


def draft_config(vocab=VOCAB):
    from transformers import Qwen3Config
    return Qwen3Config(
        vocab_size=vocab, hidden_size=128, intermediate_size=384, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, rms_norm_eps=1e-6,
        tie_word_embeddings=True, initializer_range=0.02, bos_token_id=None, eos_token_id=2,
        use_sliding_window=False,
    )


def special_ids(tok_dir):
    with open(os.path.join(tok_dir, "tokenizer.json")) as f:
        t = json.load(f)
    return {x["content"]: x["id"] for x in t["added_tokens"]}


def build(which, tok_dir):
    from transformers import Qwen3ForCausalLM
    from transformers.models.qwen3_5 import Qwen3_5ForCausalLM
    ids = special_ids(tok_dir)
    cfg = main_config() if which == "main" else draft_config()
    cfg.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    cfg.pad_token_id = ids["<|endoftext|>"]
    torch.manual_seed(SEED if which == "main" else SEED + 1)
    if which == "main":
        model = Qwen3_5ForCausalLM(cfg)
        mtp = MTPHead(cfg)
        for m in mtp.modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.normal_(m.weight, std=cfg.initializer_range)
        return model, mtp
    return Qwen3ForCausalLM(cfg), None


def save_hf(model, mtp, out_dir, dtype=torch.bfloat16, extra_cfg=None):
    from safetensors.torch import save_file
    os.makedirs(out_dir, exist_ok=True)
    sd = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()
          if not (model.config.tie_word_embeddings and k == "lm_head.weight")}
    if mtp is not None:
        sd.update({k: v.detach().to(dtype).contiguous() for k, v in mtp_state_dict(mtp).items()})
    save_file(sd, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    os.chmod(os.path.join(out_dir, "model.safetensors"), 0o644)
    cfg = model.config.to_dict()
    cfg["architectures"] = [type(model).__name__]
    cfg["dtype"] = str(dtype).replace("torch.", "")
    cfg.pop("torch_dtype", None)
    if cfg.get("model_type") == "qwen3_5_text":
        lt = cfg["layer_types"]
        cfg["full_attention_interval"] = lt.index("full_attention") + 1
    if mtp is not None:
        cfg["mtp_num_hidden_layers"] = 1
        cfg["mtp_use_dedicated_embeddings"] = False
    if extra_cfg:
        cfg.update(extra_cfg)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
    gen = {"eos_token_id": cfg["eos_token_id"], "pad_token_id": cfg.get("pad_token_id"),
           "do_sample": False}
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)


def load_hf(out_dir, with_mtp=True):
    """Load a saved model in float32 (plus the MTP head for the main model)."""
    from safetensors.torch import load_file
    from transformers import Qwen3Config, Qwen3ForCausalLM
    from transformers.models.qwen3_5 import Qwen3_5ForCausalLM, Qwen3_5TextConfig
    with open(os.path.join(out_dir, "config.json")) as f:
        cd = json.load(f)
    sd = load_file(os.path.join(out_dir, "model.safetensors"))
    if cd["model_type"] == "qwen3_5_text":
        cfg = Qwen3_5TextConfig(**{k: v for k, v in cd.items() if not k.startswith("mtp_")})
        model = Qwen3_5ForCausalLM(cfg)
    else:
        cfg = Qwen3Config(**cd)
        model = Qwen3ForCausalLM(cfg)
    missing, unexpected = model.load_state_dict({k: v.float() for k, v in sd.items() if not k.startswith("mtp.")},
                                                strict=False)
    assert all(k == "lm_head.weight" for k in missing) and not unexpected, (missing, unexpected)
    if cfg.tie_word_embeddings:
        model.lm_head.weight = model.model.embed_tokens.weight
    model.float().eval()
    mtp = None
    if with_mtp and any(k.startswith("mtp.") for k in sd):
        mtp = MTPHead(cfg)
        load_mtp_from_state_dict(mtp, sd)
        mtp.float().eval()
    return model, mtp


def n_params(model, mtp=None):
    seen, n = set(), 0
    for m in (model, mtp):
        if m is None:
            continue
        for p in m.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                n += p.numel()
    return n


# ----------------------------------------------------------------------------- training

def forward_losses(model, mtp, x):
    out = model.model(input_ids=x)
    h = out.last_hidden_state                     # post final norm
    logits = model.lm_head(h)
    V = logits.shape[-1]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V).float(), x[:, 1:].reshape(-1))
    mloss = None
    if mtp is not None:
        e = model.model.embed_tokens(x[:, 1:-1])
        mh = mtp(h[:, :-2], e)
        ml = model.lm_head(mh)
        mloss = F.cross_entropy(ml.reshape(-1, V).float(), x[:, 2:].reshape(-1))
    return loss, mloss


def cmd_train(a):
    torch.set_num_threads(a.threads)
    out_dir = MAIN_DIR if a.which == "main" else DRAFT_DIR
    data = torch.from_numpy(np.load(os.path.join(a.work, "train.npy")).astype(np.int64))
    prior_steps, prior_wall = 0, 0
    if a.resume:
        # Continue from the saved checkpoint (a warm restart of the schedule), e.g. after a run that the
        # wall-time bound cut short on a busy machine.
        model, mtp = load_hf(out_dir, with_mtp=(a.which == "main"))
        with open(os.path.join(out_dir, "training_log.json")) as f:
            prior = json.load(f)
        prior_steps, prior_wall = prior["steps_done"], prior["wall_s"]
        print(f"resuming after {prior_steps} steps ({prior_wall} s)", flush=True)
    else:
        model, mtp = build(a.which, MAIN_DIR)
    print(f"{a.which}: {n_params(model, mtp)/1e6:.3f} M params (trunk+MTP, tied emb counted once)", flush=True)
    params = list(model.parameters()) + (list(mtp.parameters()) if mtp is not None else [])
    decay = [p for p in params if p.dim() >= 2]
    nodecay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    T, B = a.seq, a.batch
    g = torch.Generator().manual_seed(SEED + (0 if a.which == "main" else 7) + prior_steps)
    nwin = len(data) - T - 2
    t0 = time.time()
    model.train()
    if mtp is not None:
        mtp.train()
    ema = None

    def checkpoint(steps_done, ema, el):
        save_hf(model, mtp, out_dir)
        if out_dir != MAIN_DIR:
            copy_tokenizer(MAIN_DIR, out_dir)
        with open(os.path.join(out_dir, "training_log.json"), "w") as f:
            json.dump({"steps_done": prior_steps + steps_done, "steps_planned": prior_steps + a.steps,
                       "resumed_at": prior_steps or None, "seq": T, "batch": B, "lr": a.lr,
                       "mtp_weight": a.mtp_weight if mtp is not None else None, "seed": SEED,
                       "train_loss_ema": ema, "wall_s": round(prior_wall + el), "threads": a.threads,
                       "max_minutes": a.max_minutes}, f, indent=2)
        print(f"checkpoint at step {steps_done}", flush=True)

    for step in range(a.steps):
        # cosine schedule over progress = max(step fraction, wall-time fraction): with a fixed seed and an
        # uncontended CPU the run is step-bound and reproducible; under CPU contention the wall-time bound
        # ends the schedule early but still anneals the learning rate properly.
        prog = max(step / a.steps, (time.time() - t0) / (a.max_minutes * 60))
        if prog >= 1.0:
            checkpoint(step, ema, time.time() - t0)
            print(f"wall-time bound reached at step {step}; stopping", flush=True)
            break
        lr = a.lr * min(1.0, (step + 1) / a.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * prog)))
        for grp in opt.param_groups:
            grp["lr"] = lr
        starts = torch.randint(0, nwin, (B,), generator=g)
        x = torch.stack([data[s: s + T + 1] for s in starts.tolist()])
        loss, mloss = forward_losses(model, mtp, x)
        total = loss + (a.mtp_weight * mloss if mloss is not None else 0.0)
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        lv = loss.item()
        ema = lv if ema is None else 0.95 * ema + 0.05 * lv
        el = time.time() - t0
        if step % 10 == 0 or step == a.steps - 1:
            print(f"step {step} lr {lr:.2e} loss {lv:.3f} ema {ema:.3f}"
                  + (f" mtp {mloss.item():.3f}" if mloss is not None else "")
                  + f" {el:.0f}s {(step+1)*B*T/el:.0f} tok/s", flush=True)
        if (step + 1) % a.ckpt_every == 0 or step == a.steps - 1:
            checkpoint(step + 1, ema, el)


# ----------------------------------------------------------------------------- evaluation

@torch.no_grad()
def cmd_eval(a):
    torch.set_num_threads(a.threads)
    held = torch.from_numpy(np.load(os.path.join(a.work, "heldout.npy")).astype(np.int64))
    train = np.load(os.path.join(a.work, "train.npy")).astype(np.int64)
    n = min(len(held) - 1, a.eval_tokens)
    T = 512
    main, mtp = load_hf(MAIN_DIR)
    draft, _ = load_hf(DRAFT_DIR, with_mtp=False)
    nll_m = nll_d = 0.0
    cnt = mtp_ok = mtp_cnt = agree = 0
    for s in range(0, n - T, T):
        x = held[s: s + T + 1][None]
        h = main.model(input_ids=x).last_hidden_state
        lm = main.lm_head(h)[0, :-1]
        y = x[0, 1:]
        nll_m += F.cross_entropy(lm, y, reduction="sum").item()
        ld = draft(input_ids=x).logits[0, :-1]
        nll_d += F.cross_entropy(ld, y, reduction="sum").item()
        agree += (ld.argmax(-1) == lm.argmax(-1)).sum().item()
        cnt += T
        mh = mtp(h[:, :-2], main.model.embed_tokens(x[:, 1:-1]))
        mp = main.lm_head(mh)[0].argmax(-1)
        mtp_ok += (mp == x[0, 2:]).sum().item()
        mtp_cnt += mp.numel()
    # bigram baselines over the same tokenizer (counts from the train split)
    V = VOCAB
    big = np.zeros((V, V), dtype=np.float64)
    np.add.at(big, (train[:-1], train[1:]), 1.0)
    uni = np.bincount(train, minlength=V).astype(np.float64)
    hx = held[: cnt + 1].numpy()
    prev, nxt = hx[:-1], hx[1:]
    row = big.sum(1)
    p_add1 = (big[prev, nxt] + 1.0) / (row[prev] + V)
    # interpolated (Jelinek-Mercer) bigram with add-one unigram; lambda tuned on the last 5% of train
    puni = (uni + 1.0) / (uni.sum() + V)
    # lambda is tuned on the last 5% of the train tokens with counts from the first 95% only
    cut = len(train) - len(train) // 20
    tr95, tune = train[:cut], train[cut:]
    b95 = np.zeros((V, V), dtype=np.float64)
    np.add.at(b95, (tr95[:-1], tr95[1:]), 1.0)
    r95 = b95.sum(1)
    u95 = np.bincount(tr95, minlength=V).astype(np.float64)
    pu95 = (u95 + 1.0) / (u95.sum() + V)
    best = None
    for lam in np.linspace(0.3, 0.99, 24):
        pt = lam * b95[tune[:-1], tune[1:]] / np.maximum(r95[tune[:-1]], 1) + (1 - lam) * pu95[tune[1:]]
        v = -np.log(pt).mean()
        if best is None or v < best[0]:
            best = (v, lam)
    lam = best[1]
    p_int = lam * big[prev, nxt] / np.maximum(row[prev], 1) + (1 - lam) * puni[nxt]
    res = {
        "heldout_tokens": cnt,
        "ppl_main": math.exp(nll_m / cnt), "ppl_draft": math.exp(nll_d / cnt),
        "ppl_bigram_add1": float(np.exp(-np.log(p_add1).mean())),
        "ppl_bigram_interp": float(np.exp(-np.log(p_int).mean())), "bigram_lambda": float(lam),
        "mtp_top1_t2": mtp_ok / mtp_cnt, "draft_agree_main_greedy": agree / cnt,
        "params_main": n_params(main, mtp), "params_draft": n_params(draft),
    }
    print(json.dumps(res, indent=2))
    with open(os.path.join(a.work, "eval.json"), "w") as f:
        json.dump(res, f, indent=2)
    # greedy samples
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(MAIN_DIR, "tokenizer.json"))
    prompts = ["def fibonacci(n):\n", "import os\n\n\ndef list_files(path):\n    \"\"\"",
               "class Stack:\n    def __init__(self):\n", "for i in range(10):\n",
               "<|im_start|>user\nWhat does the function `join` do?<|im_end|>\n<|im_start|>assistant\n"]
    ids = special_ids(MAIN_DIR)
    samples = []
    for p in prompts:
        x = tok.encode(p, add_special_tokens=False).ids
        for _ in range(a.sample_tokens):
            nx = main(input_ids=torch.tensor([x])).logits[0, -1].argmax().item()
            x.append(nx)
            if nx in (ids["<|im_end|>"], ids["<|endoftext|>"]):
                break
        samples.append({"prompt": p, "output": tok.decode(x, skip_special_tokens=False)})
    with open(os.path.join(a.work, "samples.json"), "w") as f:
        json.dump(samples, f, indent=2)
    for s in samples:
        print("-----\n" + s["output"])
    write_doc(res, samples)


def write_doc(res, samples):
    def rd(d, n):
        with open(os.path.join(d, n)) as f:
            return json.load(f)
    mlog, dlog = rd(MAIN_DIR, "training_log.json"), rd(DRAFT_DIR, "training_log.json")
    mcfg, dcfg = rd(MAIN_DIR, "config.json"), rd(DRAFT_DIR, "config.json")
    size = lambda d: sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))  # noqa: E731
    L = []
    L.append("# Cairn's default models\n")
    L.append("Two tiny models that ship with Cairn. They are generated by `tools/train_default.py` (fixed seed, CPU) "
             "and trained on the Python 3.11 standard library source, plus ChatML Q&A pairs made from its docstrings. "
             "They exist for tests, demos and speculative-decoding plumbing, not for quality.\n")
    L.append("| | `models/cairn-default-hf` (main) | `models/cairn-draft-hf` (draft) |")
    L.append("|---|---|---|")
    L.append(f"| architecture | `Qwen3_5ForCausalLM` (qwen3_5_text): {mcfg['num_hidden_layers']} layers "
             f"({mcfg['layer_types'].count('linear_attention')} Gated DeltaNet + {mcfg['layer_types'].count('full_attention')} gated attention), "
             f"+ 1 MTP layer (`mtp.*`) | `Qwen3ForCausalLM`: {dcfg['num_hidden_layers']} layers |")
    L.append(f"| hidden / FFN | {mcfg['hidden_size']} / {mcfg['intermediate_size']} | {dcfg['hidden_size']} / {dcfg['intermediate_size']} |")
    L.append(f"| attention q/kv heads × head_dim | {mcfg['num_attention_heads']}/{mcfg['num_key_value_heads']} × {mcfg['head_dim']} "
             f"(partial rotary 0.25, θ={mcfg['rope_parameters']['rope_theta']:g}) | {dcfg['num_attention_heads']}/{dcfg['num_key_value_heads']} × {dcfg['head_dim']} |")
    L.append(f"| GDN k/v heads × d_k/d_v | {mcfg['linear_num_key_heads']}/{mcfg['linear_num_value_heads']} × "
             f"{mcfg['linear_key_head_dim']}/{mcfg['linear_value_head_dim']} | — |")
    L.append(f"| vocab (shared) / tied embeddings | {mcfg['vocab_size']} / yes | {dcfg['vocab_size']} / yes |")
    L.append(f"| parameters | {res['params_main']/1e6:.2f} M (incl. MTP) | {res['params_draft']/1e6:.2f} M |")
    L.append(f"| dtype / directory size | bfloat16 / {size(MAIN_DIR)/1e6:.1f} MB | bfloat16 / {size(DRAFT_DIR)/1e6:.1f} MB |")
    L.append(f"| training | {mlog['steps_done']} steps × {mlog['batch']}×{mlog['seq']} tokens, {mlog['wall_s']/60:.1f} min | "
             f"{dlog['steps_done']} steps × {dlog['batch']}×{dlog['seq']} tokens, {dlog['wall_s']/60:.1f} min |")
    L.append("")
    L.append(f"## Held-out evaluation ({res['heldout_tokens']} tokens of held-out stdlib files, windows of 512)\n")
    L.append("| model | perplexity |")
    L.append("|---|---|")
    L.append(f"| bigram, add-one | {res['ppl_bigram_add1']:.1f} |")
    L.append(f"| bigram, interpolated with add-one unigram (λ={res['bigram_lambda']:.2f}, tuned on a 5% train split) | {res['ppl_bigram_interp']:.1f} |")
    L.append(f"| draft (Qwen3 dense) | {res['ppl_draft']:.1f} |")
    L.append(f"| main (Qwen3.5 hybrid) | {res['ppl_main']:.1f} |")
    L.append("")
    L.append(f"* MTP head top-1 accuracy on token t+2, fed the true token t+1: **{100*res['mtp_top1_t2']:.1f}%**")
    L.append(f"* Draft agrees with the main model's greedy next token on **{100*res['draft_agree_main_greedy']:.1f}%** of held-out positions\n")
    L.append("## Greedy samples (main model, no cache, up to 60 new tokens)\n")
    for s in samples:
        L.append("```")
        L.append(s["output"].replace("```", "` ` `"))
        L.append("```")
    with open(os.path.join(DOC_OUT, "default-model.auto.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["prepare", "train", "eval"])
    ap.add_argument("--work", default="/tmp/cairn-train")
    ap.add_argument("--which", choices=["main", "draft"], default="main")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--resume", action="store_true", help="train: continue from the saved checkpoint")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--mtp-weight", type=float, default=0.3)
    ap.add_argument("--max-minutes", type=float, default=35.0)
    ap.add_argument("--ckpt-every", type=int, default=100)
    ap.add_argument("--eval-tokens", type=int, default=61440)
    ap.add_argument("--sample-tokens", type=int, default=60)
    ap.add_argument("--main-dir", default=None, help="override models/cairn-default-hf (eval)")
    ap.add_argument("--draft-dir", default=None, help="override models/cairn-draft-hf (eval)")
    a = ap.parse_args()
    global MAIN_DIR, DRAFT_DIR, DOC_OUT
    MAIN_DIR = a.main_dir or MAIN_DIR
    DRAFT_DIR = a.draft_dir or DRAFT_DIR
    DOC_OUT = a.work
    {"prepare": cmd_prepare, "train": cmd_train, "eval": cmd_eval}[a.cmd](a)


if __name__ == "__main__":
    main()
