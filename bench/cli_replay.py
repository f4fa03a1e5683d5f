#!/usr/bin/env python3
"""Replays captured agent-CLI sessions against `cairn serve` and reports, per request, how much of
the prompt the prefix cache shared with what it held and how much of that it reused (issue #22).

Captures are the folders tests/e2e_cli writes when CAIRN_E2E_CLI_CAPTURES is set (or any
tools/capture_proxy.py output): one folder per client session, one NNNN.json per request with the
whole request body. Sessions from two runs of the suite are two projects: their prompts differ
where the clients print the working directory, the scratch repository's path, a date or a git
hash, which is where a hybrid model's cache has to resume from a checkpoint.

Every generation request is sent as recorded except that it is not streamed and asks for
--max-tokens tokens (prefill is what is measured). Sessions run in the order given (default:
sorted by folder name, so a client's first project comes before its second). The table gives, per
request: prompt tokens, the common prefix with the cache ("shared"), the tokens reused, their
ratio, the hit kind, and the checkpoint bytes held against their budget (GET /cache).

Target (hybrid models): reused >= 0.95 x shared on every request whose shared prefix is at least
--min-shared tokens, and checkpoint bytes within their budget. Exit status 1 when missed.

Standard library only.
"""

import argparse
import glob
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from agent_replay import Server  # noqa: E402

REPO = os.path.dirname(HERE)
GENERATION_PATHS = {"/v1/chat/completions": "max_tokens", "/v1/messages": "max_tokens",
                    "/v1/responses": "max_output_tokens"}


def load_session(folder, max_requests=0, max_body_kb=0):
    out = []
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(f) as fh:
            rec = json.load(fh)
        path = rec.get("path", "").split("?")[0]
        if rec.get("method") != "POST" or path not in GENERATION_PATHS or not isinstance(rec.get("body"), dict):
            continue
        if rec.get("status", 200) >= 400:  # refused when recorded (e.g. over the context): not a cache case
            continue
        if max_body_kb and len(json.dumps(rec["body"])) > max_body_kb * 1024:
            continue
        out.append((os.path.basename(f), path, rec["body"]))
        if max_requests and len(out) == max_requests:
            break
    return out


def replay_body(path, body, max_tokens):
    body = json.loads(json.dumps(body))
    body["stream"] = False
    body.pop("stream_options", None)
    body[GENERATION_PATHS[path]] = max_tokens
    if path == "/v1/chat/completions":
        body.pop("max_completion_tokens", None)
    return body


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--captures", required=True, help="folder holding one sub-folder per captured session")
    p.add_argument("--sessions", default="", help="comma-separated session folder names, in replay order "
                   "(default: all, sorted)")
    p.add_argument("--clients", default="", help="only sessions whose folder name starts with one of these")
    p.add_argument("--model", required=True, help="GGUF to serve (a hybrid model for the #22 target)")
    p.add_argument("--cairn", default=os.path.join(REPO, "build", "cairn"))
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--max-tokens", type=int, default=1)
    p.add_argument("--max-requests", type=int, default=0, help="replay at most this many requests per session")
    p.add_argument("--max-body-kb", type=int, default=0, help="skip requests whose body is larger (KiB)")
    p.add_argument("--min-shared", type=int, default=256, help="requests sharing fewer tokens are not judged")
    p.add_argument("--extra", default="", help="extra `cairn serve` flags, space separated")
    p.add_argument("--json", default="", help="write the rows here")
    args = p.parse_args()

    names = [s for s in args.sessions.split(",") if s] or sorted(
        d for d in os.listdir(args.captures) if os.path.isdir(os.path.join(args.captures, d)))
    if args.clients:
        names = [n for n in names if any(n.startswith(c) for c in args.clients.split(","))]
    sessions = [(n, load_session(os.path.join(args.captures, n), args.max_requests, args.max_body_kb)) for n in names]
    sessions = [(n, reqs) for n, reqs in sessions if reqs]
    if not sessions:
        sys.exit(f"no captured generation requests under {args.captures}")

    log_path = tempfile.mktemp(prefix="cairn-cli-replay-", suffix=".log")
    server = Server(args.cairn, args.model, args.threads, args.extra.split(), log_path)
    print(f"server log: {log_path}", flush=True)
    rows = []
    try:
        for name, reqs in sessions:
            for fname, path, body in reqs:
                started = time.time()
                out = server.post_json(path, replay_body(path, body, args.max_tokens))
                wall = time.time() - started
                x = out.get("x_cairn", {})
                cache = x.get("cache", {})
                listing = json.loads(server.get("/cache")[1])
                row = {"session": name, "request": fname, "path": path, "prompt": x.get("prompt_tokens"),
                       "shared": cache.get("common_prefix", 0), "reused": x.get("cached_tokens", 0),
                       "kind": cache.get("kind"), "reason": cache.get("reason", ""), "wall_s": round(wall, 1),
                       "checkpoint_bytes": listing.get("checkpoint_bytes"),
                       "checkpoint_budget_bytes": listing.get("checkpoint_budget_bytes")}
                usable = min(row["shared"], (row["prompt"] or 1) - 1)
                row["ratio"] = round(row["reused"] / usable, 3) if usable > 0 else None
                rows.append(row)
                print(f"{name:<42} {fname:<10} prompt {row['prompt']:>6}  shared {row['shared']:>6}  "
                      f"reused {row['reused']:>6}  ratio {row['ratio'] if row['ratio'] is not None else '-':>5}  "
                      f"{row['kind']:<9} ckpt {row['checkpoint_bytes'] / 2**20:.0f}/"
                      f"{row['checkpoint_budget_bytes'] / 2**20:.0f} MiB  {row['wall_s']} s", flush=True)
    finally:
        server.stop()

    judged = [r for r in rows if r["shared"] >= args.min_shared]
    misses = [r for r in judged if r["ratio"] is None or r["ratio"] < 0.95]
    over = [r for r in rows if r["checkpoint_bytes"] > r["checkpoint_budget_bytes"]]
    shared = sum(r["shared"] for r in judged)
    reused = sum(min(r["reused"], r["shared"]) for r in judged)
    print()
    print("| session | request | prompt | shared | reused | reused / shared | kind |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['session']} | {r['request']} | {r['prompt']:,} | {r['shared']:,} | {r['reused']:,} | "
              f"{r['ratio'] if r['ratio'] is not None else '-'} | {r['kind']} |")
    print()
    print(f"judged requests (shared >= {args.min_shared}): {len(judged)}; reused {reused:,} of {shared:,} shared "
          f"tokens ({reused / max(shared, 1):.3f}); below 0.95: {len(misses)}; checkpoint bytes over budget: "
          f"{len(over)}; peak checkpoint bytes {max(r['checkpoint_bytes'] for r in rows) / 2**20:.0f} MiB of "
          f"{rows[-1]['checkpoint_budget_bytes'] / 2**20:.0f} MiB")
    for r in misses:
        print(f"  miss: {r['session']} {r['request']}: {r['reused']} of {r['shared']} ({r['kind']}): {r['reason']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    sys.exit(1 if misses or over else 0)


if __name__ == "__main__":
    main()
