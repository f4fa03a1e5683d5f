#!/usr/bin/env python3
"""Re-record Cairn's side of the Gemma 3 270M goldens after an arithmetic change.

tests/model/golden/gemma3-270m/goldens.json keeps, per prompt, llama.cpp's 64
generated pieces (`llama_text`, fixed: the oracle) and Cairn's greedy ids
(`cairn_ids`, a regression lock) with `llama_agree`, how many leading Cairn
tokens decode to a prefix of llama.cpp's text. When Cairn's summation order
changes on purpose (e.g. a new canonical matmul order), the 270M model's many
near-ties move, so this tool reruns `cairn run` on every prompt, recomputes
`llama_agree` from the GGUF vocabulary, and prints the old and new agreement.
The test then shows Cairn's top-2 margin at each new divergence.

  python3 tools/relock_gemma3_goldens.py --cairn build/cairn \
      --model ~/.cache/cairn/models/gemma-3-270m-q4_k_m.gguf [--write]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess

import gguf  # PyPI: gguf (reads the vocabulary; no llama.cpp code)

GOLDENS = pathlib.Path(__file__).resolve().parent.parent / "tests/model/golden/gemma3-270m/goldens.json"
BYTE_TOKEN = 6  # tokenizer.ggml.token_type of <0xNN> byte-fallback tokens


def load_pieces(model: str) -> list[bytes]:
    reader = gguf.GGUFReader(model)
    tokens = reader.fields["tokenizer.ggml.tokens"]
    types = reader.fields["tokenizer.ggml.token_type"]
    pieces = []
    for i, idx in enumerate(tokens.data):
        text = bytes(tokens.parts[idx]).decode("utf-8")
        kind = int(types.parts[types.data[i]][0])
        if kind == BYTE_TOKEN and text.startswith("<0x") and text.endswith(">"):
            pieces.append(bytes([int(text[3:-1], 16)]))
        else:
            pieces.append(text.replace("\u2581", " ").encode("utf-8"))
    return pieces


def agreement(ids: list[int], pieces: list[bytes], llama_text: str) -> int:
    """Leading ids whose decoded bytes are a prefix of llama.cpp's text."""
    want = llama_text.encode("utf-8")
    got = b""
    for n, token in enumerate(ids):
        got += pieces[token]
        if not want.startswith(got):
            return n
    return len(ids)


def cairn_greedy(cairn: str, model: str, text: str, n: int) -> list[int]:
    out = subprocess.run(
        [cairn, "run", "-m", model, "--raw", "-p", text, "-n", str(n), "--temp", "0", "--ids", "--spec", "baseline",
         "--ignore-eos", "--no-prefix-cache", "-t", "2"],
        check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("ids:")][-1]
    return [int(t) for t in line.split()[1:]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--write", action="store_true", help="update goldens.json (else only print)")
    args = ap.parse_args()
    goldens = json.loads(GOLDENS.read_text())
    pieces = load_pieces(args.model)
    total_old = total_new = 0
    for case in goldens["generate"]:
        old_ids, old_agree = case["cairn_ids"], case["llama_agree"]
        check = agreement(old_ids, pieces, case["llama_text"])
        assert check == old_agree, f"{case['name']}: decoder gives {check}, golden says {old_agree}"
        ids = cairn_greedy(args.cairn, args.model, case["text"], len(old_ids))
        agree = agreement(ids, pieces, case["llama_text"])
        same = next((i for i, (a, b) in enumerate(zip(ids, old_ids)) if a != b), len(ids))
        print(f"{case['name']:16} llama_agree {old_agree:2} -> {agree:2}   (new ids differ from the old lock at {same})")
        total_old += old_agree
        total_new += agree
        case["cairn_ids"], case["llama_agree"] = ids, agree
    print(f"total identical to llama.cpp: {total_old} -> {total_new} of {64 * len(goldens['generate'])}")
    if args.write:
        GOLDENS.write_text(json.dumps(goldens, indent=0, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
