#!/usr/bin/env python3
"""Speculative decoding on real models, alternated with plain decoding in one process (`cairn race --repeat`).

Two cases (issue: real models):
  lookup  Qwen2.5-Coder-0.5B returns a 300-line file (a Python standard-library module Debian ships)
          with one small change; drafts come from the prompt (n-gram lookup).
  draft   Qwen2.5-Coder-1.5B as the target, Qwen2.5-Coder-0.5B as the draft (same vocabulary), writing code.

Prints cairn race's table for each case: tokens, tok/s, acceptance, acceptance per draft position
("accepted >= i drafts"), identity with plain decoding and the median speedup over the alternated races.

  python3 bench/spec_real.py [--cases lookup,draft] [--repeat 3] [--threads 2]
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = "/usr/lib/python3.11/shlex.py"   # libpython3.11-stdlib


def model_path(name):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_models.py"), "--path", name],
                         capture_output=True, text=True)
    path = out.stdout.strip()
    if out.returncode != 0 or not os.path.exists(path):
        sys.exit(f"{name} is not fetched: python3 tools/fetch_models.py {name}")
    return path


def chatml(user):
    return ("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")


def edit_prompt(lines):
    with open(SOURCE) as f:
        text = "".join(f.readlines()[:lines])
    return chatml("Rename the class `shlex` to `Shlex` everywhere in this file and change nothing else. "
                  "Reply with the whole file in one ```python block.\n\n```python\n" + text + "```")


def race(args, model, prompt, modes, n, draft=None, cap="8"):
    prompt_file = os.path.join(ROOT, "build", "spec_real_prompt.txt")
    with open(prompt_file, "w") as f:
        f.write(prompt)
    cmd = [args.cairn, "race", "--model", model, "--prompt-file", prompt_file, "--modes", modes, "-n", str(n),
           "--cap", cap, "--threads", str(args.threads), "--repeat", str(args.repeat)]
    if draft:
        cmd += ["--draft-model", draft, "--draft-quant", args.draft_quant]
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", default=os.path.join(ROOT, "build", "cairn"))
    ap.add_argument("--cases", default="lookup,draft")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lines", type=int, default=300, help="lines of the file to edit (lookup case)")
    ap.add_argument("--draft-quant", default="auto", help="draft matrices re-encoded at load (auto = q4_0, none)")
    ap.add_argument("--cap", default="6", help="draft case: drafts per round (0 = the adaptive controller)")
    ap.add_argument("--tokens", type=int, default=0, help="tokens per arm (default: 4000 lookup, 192 draft)")
    args = ap.parse_args()
    rc = 0
    small = model_path("qwen2.5-coder-0.5b-instruct-q4_k_m")
    if "lookup" in args.cases:
        rc |= race(args, small, edit_prompt(args.lines), "baseline,lookup", args.tokens or 4000, cap="16")
    if "draft" in args.cases:
        big = model_path("qwen2.5-coder-1.5b-instruct-q4_k_m")
        prompt = chatml("Write a Python function that parses a CSV line with quoted fields, with a docstring "
                        "and three doctest examples.")
        rc |= race(args, big, prompt, "baseline,draft", args.tokens or 192, draft=small, cap=args.cap)
    return rc


if __name__ == "__main__":
    sys.exit(main())
