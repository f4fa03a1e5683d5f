#!/usr/bin/env python3
"""Agent-replay benchmark for Cairn's prefix cache (issue #6) and speculation + cache (issue #7 (d)).

Starts `cairn serve` on a free loopback port, replays deterministic agent traffic over HTTP (an
~8k-token system prompt with ~20 tools rendered by the model's own chat template, a tool loop of
assistant tool calls with 300-1,500-token tool results, an identical retry, a title request, a
second session over the same system prompt, interleaved sessions and a branch), prints one row
per request and checks the issue's targets. The same replay then runs with `cache_prompt: false`
(the cold baseline) in the same server. See docs/benchmarks.md, "Agent replay".

Standard library only.
"""

import argparse
import atexit
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "agent_replay"))
import workload  # noqa: E402

REPO = os.path.dirname(HERE)

MAKE = {
    "0.8b-hybrid": ("qwen35", "0.8b"),
    "0.6b-dense": ("qwen3", "0.6b"),
    "tiny-hybrid": ("qwen35", "tiny"),
    "tiny-dense": ("qwen3", "tiny"),
}


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------
# Server process and HTTP


class Server:
    """`cairn serve` on a free loopback port, or any server `command(port)` starts (llama-server)."""

    def __init__(self, cairn, model, threads, extra, log_path, command=None):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        if command is not None:
            cmd = command(self.port)
        else:
            cmd = [cairn, "serve", "--model", model, "--host", "127.0.0.1", "--port", str(self.port),
                   "--no-disk-cache"]
            if threads:
                cmd += ["--threads", str(threads)]
            cmd += extra
        self.cmd = cmd
        self.log_path = log_path
        self.log_file = open(log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log_file, stderr=subprocess.STDOUT)
        deadline = time.time() + 600
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited ({self.proc.returncode}); see {log_path}")
            try:
                if self.get("/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError("server did not become healthy")
            time.sleep(0.2)

    def conn(self, timeout=7200):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def get(self, path):
        c = self.conn(10)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def post_json(self, path, body):
        c = self.conn()
        try:
            c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            if r.status != 200:
                raise RuntimeError(f"POST {path}: {r.status} {data[:500]!r}")
            return json.loads(data)
        finally:
            c.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log_file.close()


def chat_stream(server, body):
    """POST a streaming chat request. Returns (client_ttft, wall, final chunk x_cairn, usage)."""
    body = dict(body, stream=True, stream_options={"include_usage": True})
    c = server.conn()
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"chat: {r.status} {r.read()[:500]!r}")
    t_first = None
    x = None
    usage = None
    while True:
        line = r.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        ev = json.loads(data)
        if "error" in ev:
            raise RuntimeError(f"in-stream error: {ev['error']}")
        for ch in ev.get("choices") or []:
            d = ch.get("delta") or {}
            if t_first is None and (d.get("content") or d.get("reasoning_content") or ch.get("logprobs")):
                t_first = time.perf_counter()
        if "x_cairn" in ev:
            x = ev["x_cairn"]
        if ev.get("usage"):
            usage = ev["usage"]
    wall = time.perf_counter() - t0
    c.close()
    if t_first is None:  # no token text at all (e.g. immediate end of generation)
        t_first = t0 + wall
    return t_first - t0, wall, x or {}, usage or {}


# ---------------------------------------------------------------------------
# Template rendering (the model's own template, through `cairn template`)


class Renderer:
    """Renders with `cairn template --model` (the engine's template code) and counts tokens with the server's
    /tokenize. Message positions assume a ChatML template (<|im_start|> per message), as Qwen's."""

    def __init__(self, cairn, model, server):
        self.cairn = cairn
        self.model = model
        self.server = server
        self.dir = tempfile.mkdtemp(prefix="agent_replay_")
        atexit.register(shutil.rmtree, self.dir, True)

    def render(self, messages, tools, add_generation_prompt):
        msgs = []
        for m in messages:  # the server parses tool-call argument strings to objects; do the same
            m = dict(m)
            if m.get("tool_calls"):
                tcs = []
                for tc in m["tool_calls"]:
                    tc = json.loads(json.dumps(tc))
                    try:
                        tc["function"]["arguments"] = json.loads(tc["function"]["arguments"])
                    except (ValueError, TypeError):
                        pass
                    tcs.append(tc)
                m["tool_calls"] = tcs
            msgs.append(m)
        mp = os.path.join(self.dir, "m.json")
        tp = os.path.join(self.dir, "t.json")
        with open(mp, "w") as f:
            json.dump(msgs, f)
        cmd = [self.cairn, "template", "--model", self.model, "--messages", mp]
        if tools:
            with open(tp, "w") as f:
                json.dump(tools, f)
            cmd += ["--tools", tp]
        if add_generation_prompt:
            cmd.append("--add-generation-prompt")
        return subprocess.run(cmd, check=True, capture_output=True).stdout.decode()

    def message_start(self, messages, tools, m):
        """Token position where message m starts in the rendered prompt (each message opens one
        <|im_start|> block here: one tool result per assistant turn)."""
        text = self.render(messages, tools, True)
        off = -1
        for _ in range(m + 1):
            off = text.index("<|im_start|>", off + 1)
        return self.count(text[:off], special=True)

    def count(self, text, special=False):
        return len(self.server.post_json("/tokenize", {"content": text, "parse_special": special})["tokens"])


# ---------------------------------------------------------------------------
# The replay


class Req:
    def __init__(self, scenario, label, messages, tools, check_ratio=False, branch_start=None):
        self.scenario = scenario
        self.label = label
        self.messages = messages
        self.tools = tools
        self.check_ratio = check_ratio   # cached >= 0.98 x common prefix
        self.branch_start = branch_start  # token position of the edited message (branch)


def build_replay(args, rend):
    seed = args.seed

    def prefix_tokens(system, tools):
        text = rend.render([{"role": "system", "content": system}, {"role": "user", "content": "x"}], tools, False)
        return rend.count(text[:text.index("<|im_start|>user")], special=True)

    t0 = time.time()
    base_system, tools = workload.build_system(seed, args.system_tokens, prefix_tokens)
    system = workload.with_project(base_system, "cairn")
    count = rend.count
    a = workload.make_session("A", seed, system, args.turns, count, args.result_min, args.result_max)
    b = workload.make_session("B", seed, system, 3, count, args.result_min, args.result_max)
    T = args.turns
    reqs = [Req("cold", "A1", a.messages(1), tools),
            Req("retry", "A1", a.messages(1), tools, check_ratio=True)]
    k = 2
    if T >= 2:
        reqs.append(Req("tool-loop", "A2", a.messages(2), tools, check_ratio=True))
        k = 3
    title_msgs = [{"role": "system", "content": workload.TITLE_SYSTEM},
                  {"role": "user", "content": a.user_task}]
    reqs.append(Req("title", "title", title_msgs, None))
    if T >= 3:
        reqs.append(Req("after-title", "A3", a.messages(3), tools, check_ratio=True))
        k = 4
    reqs.append(Req("new-session", "B1", b.messages(1), tools, check_ratio=True))
    bt = 2
    while k <= T:
        if bt <= 3:
            reqs.append(Req("interleave", f"A{k}", a.messages(k), tools, check_ratio=True))
            reqs.append(Req("interleave", f"B{bt}", b.messages(bt), tools, check_ratio=True))
            bt += 1
        else:
            reqs.append(Req("tool-loop", f"A{k}", a.messages(k), tools, check_ratio=True))
        k += 1
    # Branches within the last 8k tokens: rewind the main session to step j (two tool exchanges before its
    # last request) and (1) edit that step's tool result, (2) replace that step's assistant action.
    j = max(1, T - 3)
    base = a.messages(j + 1)  # system, user, steps[0..j-1]
    ea, et = workload.edited_result(a, j, seed, count, args.result_min, args.result_max)
    edit = base + [ea, et]
    reqs.append(Req("branch-edit", f"A{j + 2}~t", edit, tools, branch_start=rend.message_start(edit, tools, len(base) + 1)))
    ea, et = workload.edited_step(a, j, seed, count, args.result_min, args.result_max)
    regen = base + [ea, et]
    reqs.append(Req("branch-regen", f"A{j + 2}~a", regen, tools, branch_start=rend.message_start(regen, tools, len(base))))
    start = reqs[-2].branch_start
    # Cross-project sessions (#22): the same client in other repositories. Their system prompts differ from
    # the cached one at the working-directory path mid-prompt; a hybrid model resumes at the checkpoint
    # nearest below it (a mark at the environment block), not at the rung before it.
    for name, project in (("P", "ledger-service"), ("Q", "tileserver")):
        s = workload.make_session("C", seed, workload.with_project(base_system, project), 2, count,
                                  args.result_min, args.result_max)
        reqs.append(Req("cross-project", f"{name}1", s.messages(1), tools, check_ratio=True))
        reqs.append(Req("cross-project", f"{name}2", s.messages(2), tools, check_ratio=True))
    # Sizes (rendered with the model's template) for the header.
    sizes = {}
    sizes["system"] = prefix_tokens(system, tools)
    sizes["tools"] = len(tools)
    sizes["A_last"] = rend.count(rend.render(a.messages(T), tools, True), special=True)
    sizes["branch_start"] = start
    sizes["results"] = [rend.count(t["content"]) for _, t in a.steps[:T - 1]]
    sizes["build_s"] = time.time() - t0
    return reqs, sizes


def run_replay(server, reqs, args, cache_on, spec, tag):
    rows = []
    t0 = time.perf_counter()
    for i, rq in enumerate(reqs):
        rows.append(run_request(server, i, rq, args, cache_on, spec, tag))
    return rows, time.perf_counter() - t0


def run_paired(server, reqs, args, spec):
    """Each request with the cache, then at once the same request without it (`cache_prompt: false`
    neither reads nor writes the cache, so the cached sequence is undisturbed). Both sides of every
    pair run under the same machine load, so the on/off ratios survive load drift; walls are the
    sums of the requests' own walls.

    A hit is measured --hit-repeats times against the same cache: the first runs carry
    `cache_store: false` (they read the cache and insert nothing), the last one stores as the replay
    needs; the first sample runs before the twin, the others after it. One prefill chunk varies by up
    to +-30% between runs on this VM, so the hit targets use the median of those samples."""
    on_rows, off_rows = [], []
    for i, rq in enumerate(reqs):
        # Hit samples bracket the twin in time (one before it, the rest after), so that load
        # drift over the minutes a twin takes weighs on both sides alike.
        samples, twin = [], None
        if rq.scenario != "cold" and args.hit_repeats > 1:
            first = run_request(server, i, rq, args, True, spec, "cache~1", store=False)
            if first["cached"] > 0:
                samples.append(first)
                twin = run_request(server, i, rq, args, False, spec, "no-cache")
                for k in range(1, args.hit_repeats - 1):
                    samples.append(run_request(server, i, rq, args, True, spec, f"cache~{k + 1}", store=False))
        row = run_request(server, i, rq, args, True, spec, "cache")
        if row["cached"] > 0:
            for s in samples:
                if s["cached"] != row["cached"]:
                    log(f"WARNING: read-only sample {s['run']} reused {s['cached']} tokens, the storing run "
                        f"{row['cached']}: the cache changed under a cache_store=false request")
            row["samples"] = samples + [row]
        on_rows.append(row)
        off_rows.append(twin if twin is not None else run_request(server, i, rq, args, False, spec, "no-cache"))
        twin_s = twin_suffix_seconds(on_rows[-1], off_rows[-1]) if on_rows[-1]["cached"] > 0 else None
        if twin_s is not None:
            # Progress line; the targets below also floor the suffix time at one decode step.
            fit_s = twin_fit_suffix_seconds(on_rows[-1], off_rows[-1])
            med = median_ttft(on_rows[-1])
            log(f"{'':<10} {'':>2} twin: the cold run spent {twin_s:.3f} s on the hit's "
                f"{on_rows[-1]['prompt'] - on_rows[-1]['cached']} fresh tokens (fit over its chunks "
                f"{fit_s:.3f} s); median hit TTFT {med:.3f} s / (1.2 x fit + 20 ms) = {med / (1.2 * fit_s + 0.020):.2f}")
    return on_rows, sum(r["wall"] for r in on_rows), off_rows, sum(r["wall"] for r in off_rows)


def run_request(server, i, rq, args, cache_on, spec, tag, store=True):
    body = {"model": "cairn", "messages": rq.messages, "max_tokens": args.max_tokens,
            "temperature": 0, "ignore_eos": True, "logprobs": True, "cache_prompt": cache_on}
    if not store:
        body["cache_store"] = False
    if rq.tools:
        body["tools"] = rq.tools
    if spec:
        body["spec"] = spec
    ttft, wall, x, usage = chat_stream(server, body)
    cache = x.get("cache") or {}
    row = {
        "run": tag, "i": i + 1, "scenario": rq.scenario, "label": rq.label,
        "ttft": ttft, "wall": wall, "x_ttft": x.get("ttft_seconds") or 0.0,
        "prefill_s": x.get("prefill_seconds") or 0.0,
        "decode_s": x.get("decode_seconds") or 0.0,
        "queue_s": x.get("queue_seconds") or 0.0,
        "prompt": x.get("prompt_tokens", usage.get("prompt_tokens", 0)),
        "cached": x.get("cached_tokens", 0),
        "usage_cached": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
        "lcp": cache.get("common_prefix", 0), "kind": cache.get("kind", "?"),
        "reason": cache.get("reason", ""), "completion": x.get("completion_tokens", 0),
        "spec": x.get("spec") or {}, "req": rq,
        "trace": [(int(pos), float(sec)) for pos, sec in (x.get("prefill_trace") or [])],
    }
    print_row(row, spec not in (None, "baseline"))
    return row


HEADER = (f"{'run':<10} {'#':>2} {'scenario':<12} {'req':<7} {'ttft_cli':>9} {'ttft_eng':>9} {'prefill_s':>9} "
          f"{'prompt':>6} {'cached':>6} {'lcp':>6} {'kind':<8} {'fresh':>6} {'decode_s':>8} {'wall':>8}")


def print_row(r, spec):
    s = (f"{r['run']:<10} {r['i']:>2} {r['scenario']:<12} {r['label']:<7} {r['ttft']:9.3f} {r['x_ttft']:9.3f} "
         f"{r['prefill_s']:9.3f} {r['prompt']:>6} {r['cached']:>6} {r['lcp']:>6} {r['kind']:<8} "
         f"{r['prompt'] - r['cached']:>6} {r['decode_s']:8.3f} {r['wall']:8.2f}")
    if spec:
        sp = r["spec"]
        s += "  spec " + " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in sp.items()
                                  if k in ("mode", "rounds", "acceptance_rate", "mean_committed_per_round", "cap"))
    log(s)


# ---------------------------------------------------------------------------
# Targets


def least_squares_first(rows):
    """(a, 0) minimising sum (a*x1 - y)^2 over rows (x1, x2, y): the fit when x2's share is unknown."""
    return sum(x1 * y for x1, _, y in rows) / sum(x1 * x1 for x1, _, _ in rows), 0.0


def nonneg_least_squares2(rows):
    """(a, b) >= 0 minimising sum (a*x1 + b*x2 - y)^2 over rows (x1, x2, y): the unconstrained
    solution when both are >= 0, else the better of the two one-parameter fits."""
    def sse(a, b):
        return sum((a * x1 + b * x2 - y) ** 2 for x1, x2, y in rows)
    s11 = sum(x1 * x1 for x1, _, _ in rows)
    s12 = sum(x1 * x2 for x1, x2, _ in rows)
    s22 = sum(x2 * x2 for _, x2, _ in rows)
    y1 = sum(x1 * y for x1, _, y in rows)
    y2 = sum(x2 * y for _, x2, y in rows)
    cands = [least_squares_first(rows), (0.0, y2 / s22)]
    det = s11 * s22 - s12 * s12
    if det > 1e-12 * s11 * s22:
        a, b = (y1 * s22 - y2 * s12) / det, (s11 * y2 - s12 * y1) / det
        if a >= 0 and b >= 0:
            cands.append((a, b))
    return min(cands, key=lambda ab: sse(*ab))


def fit_prefill_model(points):
    """Non-negative least squares T(n) = a*n + b*n^2 through cold prefills (n tokens, T seconds).
    a: per-token work (weights, recurrence); b: attention over the keys before each token."""
    pts = [(n, t) for n, t in points if n > 0 and t > 0]
    if not pts:
        return None
    rows = [(n, n * n, t) for n, t in pts]
    if len(pts) < 2 or max(n for n, _ in pts) <= 1.2 * min(n for n, _ in pts):
        return least_squares_first(rows)  # one prompt length: the a/b split is unknown; assume linear
    return nonneg_least_squares2(rows)


def trace_seconds_at(row, position):
    """Seconds a request's prefill had spent when it reached `position` of its prompt: linear between
    its x_cairn.prefill_trace marks (one per chunk), 0 at the cached length where the prefill began."""
    prev_pos, prev_sec = row["cached"], 0.0
    for pos, sec in row["trace"]:
        if position <= pos:
            span = pos - prev_pos
            return prev_sec + (sec - prev_sec) * ((position - prev_pos) / span if span > 0 else 1.0)
        prev_pos, prev_sec = pos, sec
    return prev_sec


def is_cold_twin(hit, twin):
    """twin is the hit's cache-off twin: the same prompt, prefilled cold from token 0, with a trace."""
    return twin is not None and twin["cached"] == 0 and bool(twin["trace"]) and twin["prompt"] == hit["prompt"]


def twin_suffix_seconds(hit, twin):
    """The time the hit's cache-off twin (run next to it under the same load) spent on exactly the
    positions the hit prefilled: [cached, prompt)."""
    if not is_cold_twin(hit, twin):
        return None
    return trace_seconds_at(twin, hit["prompt"]) - trace_seconds_at(twin, hit["cached"])


def twin_fit_suffix_seconds(hit, twin):
    """The twin's time on the hit's positions from a least-squares fit over all of the twin's prefill
    chunks (16-40 of them on the long prompts), not from the one or two chunks that cover the suffix:
    a chunk of L tokens starting at depth p costs L * (alpha + beta * (p + L/2)), alpha for the
    weights and recurrence, beta for attention over the keys before each token."""
    if not is_cold_twin(hit, twin):
        return None
    chunks, prev_pos, prev_sec = [], 0, 0.0
    for pos, sec in twin["trace"]:
        if pos > prev_pos:
            length, mid = pos - prev_pos, (prev_pos + pos) / 2.0
            chunks.append((length, length * mid, sec - prev_sec))
        prev_pos, prev_sec = pos, sec
    alpha, beta = nonneg_least_squares2(chunks) if len(chunks) >= 3 else least_squares_first(chunks)
    n, c = hit["prompt"], hit["cached"]
    return (n - c) * (alpha + beta * (n + c) / 2.0)


def median_ttft(hit):
    """Median client TTFT over the hit's repeated samples (the row itself when it was measured once)."""
    return statistics.median(s["ttft"] for s in hit.get("samples") or [hit])


def check_targets(on_rows, off_rows, on_wall, off_wall, sizes):
    results = []

    def res(name, ok, detail):
        results.append((name, ok))
        log(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")

    log("")
    log("== targets ==")
    cold = next(r for r in on_rows if r["scenario"] == "cold")
    retry = next(r for r in on_rows if r["scenario"] == "retry")
    ratio = cold["ttft"] / max(retry["ttft"], 1e-9)
    ratio_e = cold["x_ttft"] / max(retry["x_ttft"], 1e-9)
    res(f"identical retry of the {cold['prompt']}-token prompt >= 100x faster than cold", ratio >= 100,
        f"cold {cold['ttft']:.3f} s / retry {retry['ttft']:.3f} s = {ratio:.1f}x client "
        f"(engine {cold['x_ttft']:.3f} / {retry['x_ttft']:.3f} = {ratio_e:.1f}x)")

    # Prefill-time model from cold requests: the cache-off replay (every prompt cold) + the cold row.
    pts = [(r["prompt"], r["prefill_s"]) for r in off_rows if r["cached"] == 0]
    pts += [(r["prompt"], r["prefill_s"]) for r in on_rows if r["cached"] == 0 and r["prompt"] >= 1024]
    model = fit_prefill_model(pts)
    if model:
        a, b = model
        log(f"cold prefill model from {len(pts)} cold requests: T(n) = {a * 1e3:.3f} ms * n + "
            f"{b * 1e9:.4f} ns * n^2  (cold rate at {cold['prompt']}: {cold['prompt'] / max(cold['prefill_s'], 1e-9):.1f} tok/s)")
    # A forward pass of even one token reads every weight once: the floor of any prefill is one decode step.
    steps = sorted(r["decode_s"] / (r["completion"] - 1) for r in on_rows + off_rows if r["completion"] > 1)
    step = steps[len(steps) // 2] if steps else 0.0
    log(f"one forward pass (median decode step): {step * 1e3:.1f} ms")
    hits = [r for r in on_rows if r["cached"] > 0]
    twins = {r["i"]: r for r in off_rows}
    worst_own = worst_model = worst_twin = worst_fit = 0.0
    ok_own = ok_model = ok_twin = ok_fit = True
    n_twin = 0
    log("hit TTFT vs 1.2 x (prefill of the uncached suffix) + 20 ms (med: median of the hit's samples; "
        "twin: the cold twin's chunks on the suffix; fit: fit over all of the twin's chunks):")
    log(f"  {'req':<8} {'fresh':>6} {'n':>2} {'ttft_cli':>9} {'ttft_med':>9} {'own_pf':>8} {'cli/bnd':>7} "
        f"{'twin_pf':>8} {'cli/twin':>8} {'med/twin':>8} {'twin_fit':>8} {'med/fit':>7} {'est_pf':>8} {'cli/est':>7}")
    for r in hits:
        twin = twins.get(r["i"])
        twin_s = twin_suffix_seconds(r, twin)
        fit_s = twin_fit_suffix_seconds(r, twin)
        med = median_ttft(r)
        q_twin = q_twin_med = q_fit = float("nan")
        if twin_s is not None:
            n_twin += 1
            q_twin = r["ttft"] / (1.2 * max(step, twin_s) + 0.020)
            q_twin_med = med / (1.2 * max(step, twin_s) + 0.020)
            q_fit = med / (1.2 * max(step, fit_s) + 0.020)
            worst_twin = max(worst_twin, q_twin_med)
            worst_fit = max(worst_fit, q_fit)
            ok_twin &= q_twin_med <= 1.0
            ok_fit &= q_fit <= 1.0
        bound_own = 1.2 * r["prefill_s"] + 0.020
        est = None
        if model:
            n, c = r["prompt"], r["cached"]
            est = max(step, a * (n - c) + b * (n * n - c * c))
        q_cli = r["ttft"] / bound_own
        q_est = r["ttft"] / (1.2 * est + 0.020) if est is not None else float("nan")
        worst_own = max(worst_own, q_cli)
        if est is not None:
            worst_model = max(worst_model, q_est)
            ok_model &= q_est <= 1.0
        ok_own &= q_cli <= 1.0
        nan = float("nan")
        log(f"  {r['label']:<8} {r['prompt'] - r['cached']:>6} {len(r.get('samples') or [r]):>2} {r['ttft']:9.3f} "
            f"{med:9.3f} {r['prefill_s']:8.3f} {q_cli:7.2f} "
            f"{twin_s if twin_s is not None else nan:8.3f} {q_twin:8.2f} {q_twin_med:8.2f} "
            f"{fit_s if fit_s is not None else nan:8.3f} {q_fit:7.2f} "
            f"{est if est is not None else nan:8.3f} {q_est:7.2f}")
    res("every hit: client TTFT <= 1.2 x engine prefill_seconds of the suffix + 20 ms", ok_own,
        f"worst ratio {worst_own:.2f} over {len(hits)} hits")
    if n_twin:
        # Independent of the hit's own timing: what a cold run spent on the same tokens at the same depth,
        # two ways (its own chunks on the suffix; a fit over all its chunks). A single chunk varies +-30%
        # run to run and the fit misses chunk-to-chunk swings, so a hit passes only within both.
        res("every hit: median client TTFT <= 1.2 x max(one decode step, the cold twin's prefill time on the "
            "same suffix) + 20 ms, with that time read from the twin's chunks on the suffix and fitted over all "
            "its chunks", ok_twin and ok_fit and n_twin == len(hits),
            f"worst ratio {worst_twin:.2f} (twin's chunks) / {worst_fit:.2f} (fit) over {n_twin} of {len(hits)} hits")
    elif model:
        res("every hit: client TTFT <= 1.2 x max(one decode step, cold-rate estimate of the suffix) + 20 ms", ok_model,
            f"worst ratio {worst_model:.2f}")

    bad = []
    worst = 1e9
    for r in on_rows:
        if not r["req"].check_ratio:
            continue
        q = r["cached"] / r["lcp"] if r["lcp"] else 0.0
        worst = min(worst, q)
        if q < 0.98:
            bad.append(f"{r['label']}({r['scenario']}: {r['cached']}/{r['lcp']} {r['kind']}"
                       f"{'; ' + r['reason'] if r['reason'] else ''})")
    res("cached >= 0.98 x true common prefix (retry, tool loop, title-then-turn, new session, interleaved)",
        not bad, f"worst {worst:.4f}" + (f"; failing: {'; '.join(bad)}" if bad else ""))

    for r in on_rows:
        if r["req"].branch_start is not None:
            st = r["req"].branch_start
            prev = max((x["prompt"] for x in on_rows if x["label"].startswith("A") and not x["scenario"].startswith("branch")),
                       default=0)
            res(f"{r['scenario']} {r['label']} reuses up to the start of the edited message (at {st}, {prev - st} tokens before the end "
                f"of the longest cached prompt)", r["cached"] >= st,
                f"cached {r['cached']} (kind {r['kind']}, common prefix {r['lcp']})")

    on_fresh = sum(r["prompt"] - r["cached"] for r in on_rows)
    on_prompt = sum(r["prompt"] for r in on_rows)
    log("")
    log(f"cache on : wall {on_wall:8.1f} s, prefilled {on_fresh:>8} of {on_prompt} prompt tokens, "
        f"sum prefill_seconds {sum(r['prefill_s'] for r in on_rows):8.1f}")
    if off_rows:
        off_fresh = sum(r["prompt"] - r["cached"] for r in off_rows)
        log(f"cache off: wall {off_wall:8.1f} s, prefilled {off_fresh:>8} of "
            f"{sum(r['prompt'] for r in off_rows)} prompt tokens, sum prefill_seconds "
            f"{sum(r['prefill_s'] for r in off_rows):8.1f}")
        log(f"ratio    : wall {off_wall / max(on_wall, 1e-9):.1f}x faster, "
            f"{off_fresh / max(on_fresh, 1):.1f}x fewer tokens prefilled with the cache")
    elif model:
        # No cache-off replay: its prefill tokens are exact (every prompt in full); its wall time is estimated
        # from the cold prefill model + this run's median decode step per generated token.
        est = sum(a * r["prompt"] + b * r["prompt"] ** 2 for r in on_rows)
        est += sum(step * r["completion"] for r in on_rows)
        log(f"cache off (not run; estimated): wall ~{est:8.1f} s, prefilled {on_prompt:>8} tokens")
        log(f"ratio (estimated): wall ~{est / max(on_wall, 1e-9):.1f}x, {on_prompt / max(on_fresh, 1):.1f}x fewer "
            f"tokens prefilled with the cache")
    return results


# ---------------------------------------------------------------------------


def run_llama(args, model, reqs):
    """Replays the same requests on llama-server (one slot, its default prompt caching) and returns the
    tokens it reused per request (timings.cache_n). llama.cpp is built by hand; see --llama-server."""
    log_path = f"/tmp/agent_replay_llama_{os.getpid()}.log"
    srv = Server(None, model, args.threads, [], log_path, command=lambda port: [
        args.llama_server, "-m", model, "-t", str(args.threads), "--host", "127.0.0.1", "--port", str(port),
        "-c", "65536", "-np", "1", "--jinja"])
    out = []
    try:
        log(f"llama-server: {' '.join(srv.cmd)} (log {log_path})")
        for i, rq in enumerate(reqs):
            body = {"messages": rq.messages, "max_tokens": args.max_tokens, "temperature": 0, "ignore_eos": True,
                    "cache_prompt": True}
            if rq.tools:
                body["tools"] = rq.tools
            t0 = time.perf_counter()
            t = srv.post_json("/v1/chat/completions", body).get("timings") or {}
            out.append({"i": i + 1, "label": rq.label, "cached": t.get("cache_n", 0),
                        "prompt": t.get("cache_n", 0) + t.get("prompt_n", 0), "wall": time.perf_counter() - t0})
            log(f"llama.cpp {i + 1:>2} {rq.scenario:<13} {rq.label:<7} prompt {out[-1]['prompt']:>6} "
                f"cached {out[-1]['cached']:>6} wall {out[-1]['wall']:.2f} s")
    finally:
        srv.stop()
    return out


def compare_with_llama(on_rows, llama_rows):
    """Cached tokens per request, side by side; the #22 target is Cairn >= llama.cpp on every request."""
    log("")
    log("== cached tokens: Cairn vs llama.cpp (same requests, same model) ==")
    log("| # | request | scenario | prompt (Cairn) | cached Cairn | kind | prompt (llama.cpp) | cached llama.cpp | Cairn - llama.cpp |")
    log("| ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
    behind = 0
    for r, l in zip(on_rows, llama_rows):
        d = r["cached"] - l["cached"]
        behind += d < 0
        log(f"| {r['i']} | {r['label']} | {r['scenario']} | {r['prompt']:,} | {r['cached']:,} | {r['kind']} | "
            f"{l['prompt']:,} | {l['cached']:,} | {d:+,} |")
    ok = behind == 0
    log(f"{'PASS' if ok else 'FAIL'}  cached >= llama.cpp's on every request: {behind} request(s) behind")
    return ok


def ensure_model(args, cairn):
    if args.model:
        return args.model
    arch, preset = MAKE[args.make]
    path = f"/tmp/cairn-bench-{arch}-{preset}-q8_0-s1.gguf"
    if not os.path.exists(path):
        log(f"creating {path} ...")
        subprocess.run([cairn, "mkmodel", "--arch", arch, "--preset", preset, "--quant", "q8_0", "--seed", "1",
                        "-o", path + ".part"], check=True)
        os.rename(path + ".part", path)
    return path


def summarize(rows):
    return {
        "wall": sum(r["wall"] for r in rows),
        "fresh": sum(r["prompt"] - r["cached"] for r in rows),
        "prefill": sum(r["prefill_s"] for r in rows),
        "decode": sum(r["decode_s"] for r in rows),
        "completion": sum(r["completion"] for r in rows),
        "rounds": sum(r["spec"].get("rounds", 0) or 0 for r in rows),
        "committed": sum(r["spec"].get("committed", 0) or 0 for r in rows),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--model", help="GGUF model")
    g.add_argument("--make", choices=sorted(MAKE), default="tiny-hybrid",
                   help="create (or reuse) a random-init model in /tmp")
    p.add_argument("--cairn", default=os.path.join(REPO, "build-bench", "cairn"), help="cairn binary")
    p.add_argument("--system-tokens", type=int, default=8000, help="system prompt + tools, rendered (tokens)")
    p.add_argument("--turns", type=int, default=8, help="tool-loop turns of the main session (>= 4)")
    p.add_argument("--result-min", type=int, default=300, help="shortest tool result (tokens)")
    p.add_argument("--result-max", type=int, default=1500, help="longest tool result (tokens)")
    p.add_argument("--max-tokens", type=int, default=8, help="tokens generated per request")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--hit-repeats", type=int, default=3,
                   help="paired mode: measure each hit this many times against the same cache (the first "
                        "ones with cache_store: false); the hit targets use the median")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-cold-baseline", action="store_true", help="skip the cache-off replay")
    p.add_argument("--sequential", action="store_true",
                   help="replay everything with the cache, then everything without it (default: each request "
                        "with the cache, then at once without it, so both sides see the same load)")
    p.add_argument("--spec", help="issue #7 (d): also replay with this speculative mode (lookup|draft|mtp|auto), "
                                  "cache on and off, each on a fresh server")
    p.add_argument("--server-arg", action="append", default=[], help="extra `cairn serve` argument (repeatable)")
    p.add_argument("--json", help="write all rows to this JSON file")
    p.add_argument("--llama-server", help="a llama-server binary you built: replay the same requests on it after "
                                          "Cairn's replay and compare cached tokens per request (issue #22)")
    args = p.parse_args()
    if args.turns < 4:
        p.error("--turns must be >= 4")
    if args.hit_repeats < 1:
        p.error("--hit-repeats must be >= 1")

    cairn = args.cairn
    model = ensure_model(args, cairn)
    log_path = f"/tmp/agent_replay_server_{os.getpid()}.log"
    load = open("/proc/loadavg").read().split()[:3]
    log(f"agent replay: model {model}, threads {args.threads}, system {args.system_tokens} tokens, "
        f"{args.turns} turns, max_tokens {args.max_tokens}, seed {args.seed}; load average {' '.join(load)}; "
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    # Plain decoding in the cache runs: `auto` would calibrate verify costs on first use (minutes on a loaded
    # machine) and pick a mode per request, which is issue #7's business, not the cache's.
    spec_base = "baseline"
    srv = Server(cairn, model, args.threads, args.server_arg, log_path)
    all_rows = []
    try:
        health = json.loads(srv.get("/health")[1])
        log(f"server: port {srv.port}, {json.dumps({k: health[k] for k in health if k in ('architecture', 'context_window', 'prefix_cache', 'spec')})}")
        rend = Renderer(cairn, model, srv)
        reqs, sizes = build_replay(args, rend)
        log(f"workload: system+tools {sizes['system']} tokens ({sizes['tools']} tools), last A prompt "
            f"{sizes['A_last']} tokens, tool results {sizes['results']} tokens, branch edits message at "
            f"{sizes['branch_start']}; built in {sizes['build_s']:.1f} s")
        # Warm-up: fault the weights in, so the cold row measures prefill, not page faults.
        chat_stream(srv, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "temperature": 0,
                          "cache_prompt": False, "spec": "baseline"})
        log("")
        log(HEADER)
        off_rows, off_wall = [], 0.0
        if args.no_cold_baseline or args.sequential:
            on_rows, on_wall = run_replay(srv, reqs, args, True, spec_base, "cache")
        else:
            on_rows, on_wall, off_rows, off_wall = run_paired(srv, reqs, args, spec_base)
        all_rows += on_rows + off_rows
        st, body = srv.get("/cache")
        if st == 200:
            try:
                listing = json.loads(body)
                log(f"/cache: {json.dumps(listing)[:600]}")
            except ValueError:
                pass
        if args.sequential and not args.no_cold_baseline:
            off_rows, off_wall = run_replay(srv, reqs, args, False, spec_base, "no-cache")
            all_rows += off_rows
        check_targets(on_rows, off_rows, on_wall, off_wall, sizes)
    finally:
        srv.stop()
    if args.llama_server:
        compare_with_llama(on_rows, run_llama(args, model, reqs))

    if args.spec:
        srv2 = Server(cairn, model, args.threads, args.server_arg, log_path)
        try:
            chat_stream(srv2, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "temperature": 0,
                               "cache_prompt": False})
            log("")
            log(HEADER)
            spec_on, _ = run_replay(srv2, reqs, args, True, args.spec, "cache+sp")
            all_rows += spec_on
            spec_off = []
            if not args.no_cold_baseline:
                spec_off, _ = run_replay(srv2, reqs, args, False, args.spec, "sp-only")
                all_rows += spec_off
        finally:
            srv2.stop()
        log("")
        log(f"== issue #7 (d): speculation ({args.spec}) x prefix cache, {args.max_tokens} tokens per request ==")
        log(f"{'config':<22} {'wall_s':>8} {'prefilled':>9} {'prefill_s':>9} {'decode_s':>8} {'decode tok/s':>12} "
            f"{'committed/round':>15}")
        configs = [("cache + baseline", on_rows), (f"cache + {args.spec}", spec_on)]
        if off_rows:
            configs.append(("no cache + baseline", off_rows))
        if spec_off:
            configs.append((f"no cache + {args.spec}", spec_off))
        for name, rows in configs:
            s = summarize(rows)
            log(f"{name:<22} {s['wall']:8.1f} {s['fresh']:>9} {s['prefill']:9.1f} {s['decode']:8.2f} "
                f"{s['completion'] / max(s['decode'], 1e-9):12.1f} {s['committed'] / max(s['rounds'], 1):15.2f}")
        modes = sorted({r["spec"].get("mode", "?") for r in spec_on})
        log(f"server-reported spec modes in the speculative runs: {modes}"
            + ("  (speculation is not wired into the server yet: these runs are plain decoding)"
               if modes == ["baseline"] else ""))
    if args.json:
        with open(args.json, "w") as f:
            def sample(x):
                return {k: x[k] for k in ("run", "ttft", "x_ttft", "prefill_s", "cached")}
            json.dump([dict({k: ([sample(x) for x in v] if k == "samples" else v) for k, v in r.items() if k != "req"},
                            check_ratio=r["req"].check_ratio,
                            branch_start=r["req"].branch_start) for r in all_rows], f, indent=1)
    log(f"server log: {log_path}; load average now {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
