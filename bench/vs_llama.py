#!/usr/bin/env python3
"""Cairn against llama.cpp on the same GGUF files, the two engines alternated in one run.

You build llama.cpp yourself (any CPU build with llama-bench); nothing of it is part of Cairn.
For each file and round: `llama-bench -m F -t T -p P -n N -fa 0 -r 1 -o json`, then
`cairn bench --model F --threads T --prompt-tokens P --depths 0 --decode-tokens N`. Prints one
row per file: the median over rounds of each engine's prefill and decode tok/s, their ratios
(Cairn / llama.cpp; > 1 means Cairn is faster) and Cairn's peak RSS. Record `lscpu` with them.
`--cache-type-k q8_0` runs both with a Q8_0 K cache (`-ctk q8_0`).
`--depth D --prompt-tokens 0` compares decode after D cached tokens instead (`llama-bench -d D`,
`cairn bench --depths D`; both fill the depth by prefill, untimed).

  python3 bench/vs_llama.py --llama-build ~/llama.cpp/build --model a.gguf --model b.gguf \\
      [--threads 2] [--prompt-tokens 512] [--decode-tokens 64] [--rounds 3] [--cairn-max-target AVX2]

--cairn-max-target caps Cairn's kernel dispatch (CAIRN_MAX_TARGET) so an AVX-512 machine times the
code an AVX2 CPU runs; pair it with a llama.cpp build made for that ISA alone (e.g. GGML_NATIVE=OFF,
GGML_AVX2=ON, GGML_AVX512=OFF). The header line names the target each engine ran.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def llama_bench(binary, model, threads, prompt, decode, depth, cache_type_k):
    cmd = [binary, "-m", model, "-t", str(threads), "-p", str(prompt), "-n", str(decode), "-fa", "0", "-r", "1",
           "-ctk", cache_type_k, "-o", "json"]
    if depth:
        cmd += ["-d", str(depth)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    pp = next((r["avg_ts"] for r in rows if prompt and r["n_prompt"] == prompt and r["n_gen"] == 0), None)
    tg = next(r["avg_ts"] for r in rows if r["n_gen"] == decode and r["n_prompt"] == 0)
    return pp, tg


def cairn_env(max_target):
    env = dict(os.environ)
    if max_target:
        env["CAIRN_MAX_TARGET"] = max_target
    return env


def cairn_target(binary, max_target):
    out = subprocess.run([binary, "cpu"], capture_output=True, text=True, check=True, env=cairn_env(max_target)).stdout
    m = re.search(r"kernels dispatch to: (\S+)", out)
    return m.group(1) if m else "?"


def cairn_bench(binary, model, threads, prompt, decode, max_target, depth, cache_type_k):
    out = subprocess.run([binary, "bench", "--model", model, "--threads", str(threads), "--prompt-tokens", str(prompt),
                          "--depths", str(depth), "--decode-tokens", str(decode), "--paired-steps", "0",
                          "--cache-type-k", cache_type_k],
                         capture_output=True, text=True, check=True, env=cairn_env(max_target)).stdout
    pp = tg = rss = None
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if prompt and len(cells) == 4 and cells[0] == str(prompt):
            pp = float(cells[1])                    # prefill tok/s (wall)
        if len(cells) >= 11 and cells[0] == str(depth) and cells[1].startswith("prefill"):
            tg = float(cells[3])                    # decode tok/s (wall)
        m = re.match(r"- peak RSS: ([\d.]+) MB", line)
        if m:
            rss = float(m.group(1))
    if (prompt and pp is None) or tg is None:
        raise RuntimeError("could not read cairn bench's tables:\n" + out)
    return pp, tg, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-build", required=True, help="llama.cpp build directory (bin/llama-bench inside)")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--cairn", default=os.path.join(ROOT, "build", "cairn"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cairn-max-target", default="", help="cap Cairn's dispatch (CAIRN_MAX_TARGET), e.g. AVX2")
    ap.add_argument("--depth", type=int, default=0,
                    help="decode after this many cached tokens (both engines fill them by prefill); with a depth, "
                         "prefill is not compared (use --prompt-tokens 0)")
    ap.add_argument("--cache-type-k", default="f16", choices=["f16", "q8_0"],
                    help="K cache type of both engines (llama-bench -ctk, cairn bench --cache-type-k)")
    args = ap.parse_args()
    llama = os.path.join(args.llama_build, "bin", "llama-bench")
    if not os.access(llama, os.X_OK):
        sys.exit(f"no llama-bench in {args.llama_build}/bin")
    print(f"Cairn kernels: {cairn_target(args.cairn, args.cairn_max_target)}; llama.cpp build: {args.llama_build}; "
          f"{args.threads} threads; K cache {args.cache_type_k}\n")
    if args.depth and args.prompt_tokens:
        sys.exit("--depth compares decode only: pass --prompt-tokens 0")
    print(f"| model | prefill {args.prompt_tokens} llama.cpp | prefill Cairn | ratio | decode @{args.depth} llama.cpp | "
          f"decode Cairn | ratio | Cairn peak RSS MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model in args.model:
        lp, lt, cp, ct, rss = [], [], [], [], []
        for r in range(args.rounds):
            a = llama_bench(llama, model, args.threads, args.prompt_tokens, args.decode_tokens, args.depth,
                            args.cache_type_k)
            b = cairn_bench(args.cairn, model, args.threads, args.prompt_tokens, args.decode_tokens,
                            args.cairn_max_target, args.depth, args.cache_type_k)
            lp.append(a[0] or 0); lt.append(a[1]); cp.append(b[0] or 0); ct.append(b[1]); rss.append(b[2] or 0)
            print(f"<!-- {os.path.basename(model)} round {r + 1}: llama.cpp pp {a[0] or 0:.1f} tg {a[1]:.1f}, "
                  f"cairn pp {b[0] or 0:.1f} tg {b[1]:.1f} -->", file=sys.stderr, flush=True)
        m = statistics.median
        prefill = (f"{m(lp):.1f} | {m(cp):.1f} | {m(cp) / m(lp):.2f}x" if args.prompt_tokens else "- | - | -")
        print(f"| {os.path.basename(model)} | {prefill} | {m(lt):.1f} | "
              f"{m(ct):.1f} | {m(ct) / m(lt):.2f}x | {max(rss):.0f} |", flush=True)


if __name__ == "__main__":
    main()
