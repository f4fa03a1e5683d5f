#!/usr/bin/env python3
"""Records llama.cpp's answers on the real GGUF files as small goldens for Cairn's tests.

It only *runs* an existing llama.cpp build (CPU-only, commit 3f545bec); it never builds one.
Outputs go to tests/real_models/golden/<model name>/:

  tokenize.json    ids of a tokenizer corpus   (llama-tokenize -f F --ids --no-escape [--no-parse-special])
  greedy.json      64-token greedy completions (llama-completion, see GREEDY_ARGS), raw and chat-rendered
  perplexity.json  PPL of a Python stdlib file (llama-perplexity, see PPL_ARGS)

Usage:
  tools/make_real_goldens.py --llama-bin /work/oracle/llama.cpp/build/bin MODEL [MODEL ...] [--only tokenize,greedy,perplexity]

MODEL is a tools/fetch_models.py name. Generated ids come from llama-completion's session
file (--prompt-cache F --prompt-cache-all stores every decoded token: prompt + generation but
the last sampled one, hence -n N+1). Generation stops early at an end-of-generation token;
the golden then says `"eog": true` (the EOG token itself is sampled but never decoded, so it
is not in the session: the test checks that Cairn's next argmax is an EOG token).
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import fetch_models  # noqa: E402

LLAMA_CPP_COMMIT = "3f545bec"
N_GREEDY = 64

# K/V cache: llama.cpp's default f16, which is also Cairn's (Cairn has no F32 KV cache), so both
# store the same rounded K and V. Flash attention off: llama.cpp's CPU FA kernel accumulates
# P.V in f16; without it Q and P are rounded to f16 for the two products and everything
# else is f32, the closest llama.cpp path to Cairn's (f32 Q, f32 P, f32 accumulation).
# -nr (no repack): this build's AMX repacked kernels die with SIGILL on the build machine
# (the CPU reports AMX, the kernel does not grant the tile state); repacking only changes the
# weight layout, not the arithmetic of the plain CPU path Cairn mirrors.
KV_ARGS = ["-fa", "off", "-nr"]
GREEDY_ARGS = ["-no-cnv", "--no-escape", "-n", str(N_GREEDY + 1), "--temp", "0", "--top-k", "1", "-s", "1",
               "-ngl", "0", "-t", "1", "-c", "1024", "--no-warmup"] + KV_ARGS
PPL_TEXT = "/usr/lib/python3.11/argparse.py"
PPL_ARGS = ["-c", "512", "-ngl", "0", "-t", "1", "-b", "512"] + KV_ARGS
PPL_CHUNKS = {"qwen2.5-coder-1.5b-instruct-q4_k_m": 6}  # others: 12 (CI time)

# Tokenizer corpus: (name, text, parse_special).
CORPUS = [
    ("plain", "Hello world", True),
    ("leading_space", " Hello", True),
    ("leading_spaces", "   Hello", True),
    ("trailing_spaces", "Hello   ", True),
    ("multiple_spaces", "a  b   c    d", True),
    ("newlines", "line one\n\nline two\n\n\nthree\n", True),
    ("crlf", "a\r\nb\r\n\r\nc", True),
    ("tabs", "\tindented\t\tcode\t", True),
    ("digits", "12345 and 3.14159 and 1,000,000", True),
    ("contractions", "I'LL don't you're we've she'd it's THEY'RE I'm", True),
    ("cjk", "你好，世界！日本語のテキスト。한국어 텍스트", True),
    ("emoji", "I love 🦀 and 🐍! 👍🏽 family: 👨‍👩‍👧", True),
    ("code", "def reverse(s: str) -> str:\n    return s[::-1]\n\nprint(reverse(\"hello\"))\n", True),
    ("im_start_special", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", True),
    ("im_start_literal", "<|im_start|>user\nhi<|im_end|>", False),
    ("endoftext", "a<|endoftext|>b", True),
    ("mixed_ws", " \n \t x \n\n  ", True),
    ("punct", "Hello!!! What?? (yes) [no] {maybe}... -- --- \"quoted\" 'single'", True),
    ("accents", "café naïve résumé Ångström Straße", True),
    # Not here: invalid UTF-8. llama.cpp turns each ill-formed byte into U+FFFD before the BPE split
    # (and then splits it off from a preceding space); Cairn keeps the raw bytes (HF cannot even take
    # them). A known divergence, documented in docs/real-models.md.
    ("long_spaces", " " * 40 + "x", True),
    ("url", "https://example.com/path?q=1&r=two#frag", True),
]

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):",
    "Once upon a time, in a small village,",
    "# Python program to check if a number is prime\n",
    "The three primary colors are",
    "import numpy as np\n\n",
    "Q: What is 12 * 7?\nA:",
    "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
    "SELECT name FROM users WHERE",
]
CHAT_MESSAGES = [
    "Write a Python function that reverses a string.",
    "What is the capital of Japan?",
    "Explain recursion in one sentence.",
    "Give me three names for a cat.",
]

CHAT_SYSTEM = {  # the default system turn each file's template inserts (read from the GGUF template)
    "qwen2": "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
    "smollm": "You are a helpful AI assistant named SmolLM, trained by Hugging Face",
}


def chatml(system, user):
    return f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return r


def text_bytes(name, text):
    return text.encode("latin-1") if name == "invalid_utf8" else text.encode("utf-8")


def tokenize(bin_dir, model, data, parse_special):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
    try:
        cmd = [os.path.join(bin_dir, "llama-tokenize"), "-m", model, "-f", f.name, "--ids", "--no-escape",
               "--log-disable"]
        if not parse_special:
            cmd.append("--no-parse-special")
        out = run(cmd).stdout.decode().strip().splitlines()[-1]
        return json.loads(out)
    finally:
        os.unlink(f.name)


def session_tokens(path):
    with open(path, "rb") as f:
        magic, version, n = struct.unpack("<III", f.read(12))
        return list(struct.unpack(f"<{n}i", f.read(4 * n)))


def greedy(bin_dir, model, prompt):
    with tempfile.TemporaryDirectory() as d:
        session = os.path.join(d, "session.bin")
        cmd = [os.path.join(bin_dir, "llama-completion"), "-m", model, "-p", prompt, "--prompt-cache", session,
               "--prompt-cache-all"] + GREEDY_ARGS
        r = run(cmd, stdin=subprocess.DEVNULL)
        return session_tokens(session), r.stdout.decode(errors="replace")


def perplexity(bin_dir, model, text_path, chunks):
    cmd = [os.path.join(bin_dir, "llama-perplexity"), "-m", model, "-f", text_path, "--chunks", str(chunks)] + PPL_ARGS
    r = run(cmd)
    log = r.stdout.decode() + r.stderr.decode()
    chunks = [float(x) for x in __import__("re").findall(r"\[\d+\]([0-9.]+)", log)]
    final = __import__("re").search(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)", log)
    n_chunks = __import__("re").search(r"calculating perplexity over (\d+) chunks", log)
    return {"ppl": float(final.group(1)), "ppl_stderr": float(final.group(2)), "chunk_running_ppl": chunks,
            "chunks": int(n_chunks.group(1))}


def dump(doc, path):
    """Pretty top level, one case per line (small diffs when regenerated)."""
    with open(path, "w") as f:
        f.write("{\n")
        items = list(doc.items())
        for i, (k, v) in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            if k == "cases":
                f.write(f' "cases": [\n')
                f.write(",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in v))
                f.write(f"\n ]{sep}\n")
            else:
                f.write(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}{sep}\n")
        f.write("}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-bin", required=True)
    ap.add_argument("--only", default="tokenize,greedy,perplexity")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    only = set(args.only.split(","))
    for name in args.models:
        model = os.path.join(fetch_models.cache_dir(), fetch_models.MODELS[name].file)
        out_dir = os.path.join(ROOT, "tests", "real_models", "golden", name)
        os.makedirs(out_dir, exist_ok=True)
        common = {"model": name, "llama_cpp_commit": LLAMA_CPP_COMMIT, "sha256": fetch_models.MODELS[name].sha256}
        if "tokenize" in only:
            cases = []
            for cname, text, special in CORPUS:
                data = text_bytes(cname, text)
                cases.append({"name": cname, "hex": data.hex(), "parse_special": special,
                              "ids": tokenize(args.llama_bin, model, data, special)})
            doc = dict(common, command="llama-tokenize -m MODEL -f TEXT --ids --no-escape [--no-parse-special]",
                       cases=cases)
            dump(doc, os.path.join(out_dir, "tokenize.json"))
        if "greedy" in only:
            system = CHAT_SYSTEM["smollm" if name.startswith("smollm") else "qwen2"]
            prompts = [("raw", p) for p in PROMPTS] + [("chat", chatml(system, m)) for m in CHAT_MESSAGES]
            cases = []
            for kind, p in prompts:
                ids, text = greedy(args.llama_bin, model, p)
                prompt_ids = tokenize(args.llama_bin, model, p.encode(), True)
                assert ids[:len(prompt_ids)] == prompt_ids, (p, ids[:len(prompt_ids)], prompt_ids)
                gen = ids[len(prompt_ids):]
                cases.append({"kind": kind, "prompt": p, "prompt_ids": prompt_ids, "ids": gen,
                              "eog": len(gen) < N_GREEDY})
                print(f"{name}: {kind} {p[:40]!r}: {len(gen)} tokens", file=sys.stderr)
            doc = dict(common, command="llama-completion -m MODEL -p PROMPT --prompt-cache S --prompt-cache-all "
                       + " ".join(GREEDY_ARGS), n=N_GREEDY, cases=cases)
            dump(doc, os.path.join(out_dir, "greedy.json"))
        if "perplexity" in only:
            res = perplexity(args.llama_bin, model, PPL_TEXT, PPL_CHUNKS.get(name, 12))
            doc = dict(common, command=f"llama-perplexity -m MODEL -f TEXT --chunks {res['chunks']} " + " ".join(PPL_ARGS), text=PPL_TEXT,
                       ctx=512, **res)
            dump(doc, os.path.join(out_dir, "perplexity.json"))
            print(f"{name}: PPL {res['ppl']} over {res['chunks']} chunks", file=sys.stderr)


if __name__ == "__main__":
    main()
