"""Claude Code, Codex, OpenCode and qwen-code, headless, on `cairn serve`.

Each client gets the same task in a scratch git repository ("Read main.py and
fix the bug in add()") and runs to its own end. Every request it makes goes
through a recording proxy. Checked per client:
  - every request is answered without a 4xx/5xx;
  - the client executed at least one of the model's tool calls (a later request
    carries its result: Anthropic tool_result, Responses function_call_output,
    chat role "tool");
  - every follow-up request (one whose conversation extends an earlier one's)
    is served from the cache: cached >= 0.9 x the common prefix the cache held
    (x_cairn.cache.common_prefix, the token-by-token match against the trie).
Whether the model's fix is right is the model's business and is only reported;
a session where the model called no tool is run again (up to three times).
A per-request summary goes to CAIRN_E2E_CLI_REPORT (JSON and Markdown).
"""
from __future__ import annotations

import copy
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

from clients import CLIENTS, child_env
from recorder import Recorder

GENERATION_PATHS = ("/v1/messages", "/v1/responses", "/v1/chat/completions")
CACHED_FRACTION = 0.9


def _text_only(blocks) -> str | None:
    """The text of a content list made only of text blocks (else None)."""
    if not isinstance(blocks, list) or not all(
            isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text") for b in blocks):
        return None
    return "\n".join(str(b.get("text", "")) for b in blocks)


def _strip(value):
    """A conversation item without what a client may add or move between turns
    (cache_control marks; text given as one block one turn and a string the next)."""
    if isinstance(value, dict):
        out = {k: _strip(v) for k, v in value.items() if k not in ("cache_control", "providerOptions")}
        if "content" in value and _text_only(value["content"]) is not None:
            out["content"] = _text_only(value["content"])
        return out
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def conversation(record: dict) -> list:
    body = record.get("body") or {}
    if not isinstance(body, dict):
        return []
    items = body.get("messages") if "messages" in body else body.get("input")
    return _strip(copy.deepcopy(items)) if isinstance(items, list) else []


def x_cairn(record: dict) -> dict | None:
    """The last x_cairn object in the response (SSE events or a JSON body)."""
    found = None

    def walk(value):
        nonlocal found
        if isinstance(value, dict):
            if isinstance(value.get("x_cairn"), dict):
                found = value["x_cairn"]
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    text = record.get("response_tail") or ""
    try:
        walk(json.loads(text))
    except ValueError:
        for line in text.splitlines():
            if line.startswith("data: "):
                try:
                    walk(json.loads(line[6:]))
                except ValueError:
                    pass
    return found


def carries_tool_result(record: dict, api: str) -> bool:
    for item in conversation(record):
        if not isinstance(item, dict):
            continue
        if api == "anthropic" and isinstance(item.get("content"), list):
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in item["content"]):
                return True
        if api == "responses" and item.get("type") == "function_call_output":
            return True
        if api == "chat" and item.get("role") == "tool":
            return True
    return False


def summarize(records: list[dict], api: str) -> list[dict]:
    rows = []
    generations = []  # (index in rows, conversation)
    for record in records:
        path = record["path"].split("?")[0]
        row = {"n": len(rows) + 1, "route": f'{record["method"]} {record["path"]}', "status": record["status"]}
        if record["method"] == "POST" and path in GENERATION_PATHS:
            xc = x_cairn(record) or {}
            cache = xc.get("cache", {})
            conv = conversation(record)
            parent = None
            for i, previous in reversed(generations):
                if 0 < len(previous) <= len(conv) and conv[:len(previous)] == previous and previous != conv:
                    parent = i
                    break
            row.update({
                "prompt_tokens": xc.get("prompt_tokens"),
                "cached_tokens": xc.get("cached_tokens"),
                "common_prefix": cache.get("common_prefix"),
                "cache_kind": cache.get("kind"),
                "normalized": cache.get("normalized"),
                "ttft_s": round(xc["ttft_seconds"], 2) if "ttft_seconds" in xc else None,
                "completion_tokens": xc.get("completion_tokens"),
                "follow_up_of": rows[parent]["n"] if parent is not None else None,
                "tool_result": carries_tool_result(record, api),
            })
            generations.append((len(rows), conv))
        rows.append(row)
    return rows


def write_report(report_dir, name: str, prompts: str, rows: list[dict], outcome: dict):
    (report_dir / f"{name}-{prompts}.json").write_text(json.dumps({"rows": rows, **outcome}, indent=1))
    lines = [f"### {name} ({prompts} prompts): {outcome['wall_s']} s, exit {outcome['exit']}, "
             f"fix applied: {outcome['fixed']}", "",
             "| # | request | status | prompt | cached | common prefix | follow-up of | TTFT s | out | tool result in |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append("| {n} | {route} | {status} | {p} | {c} | {cp} | {f} | {t} | {o} | {tr} |".format(
            n=r["n"], route=r["route"], status=r["status"], p=r.get("prompt_tokens", ""),
            c=r.get("cached_tokens", ""), cp=r.get("common_prefix", ""), f=r.get("follow_up_of") or "",
            t=r.get("ttft_s", ""), o=r.get("completion_tokens", ""), tr="yes" if r.get("tool_result") else ""))
    (report_dir / f"{name}-{prompts}.md").write_text("\n".join(lines) + "\n")


def run_session(name, launcher, api, cli_bin_dir, upstream, repo, tmp_path, prompts, attempt):
    """One headless client session; returns (rows, outcome, context)."""
    # Each attempt works in its own copy of the scratch repository, at its own
    # path: clients put the working directory into the prompt, so with greedy
    # decoding three sessions in one directory would be the same session three
    # times, and the retries (below) would not be independent chances.
    work = tmp_path / f"attempt-{attempt}" / "repo"
    shutil.copytree(repo, work)
    repo = work
    recorder = Recorder(upstream, tmp_path / f"records-{attempt}")
    try:
        launch = launcher(cli_bin_dir, recorder.url, tmp_path / f"client-{attempt}", prompts)
        started = time.time()
        limit = int(os.environ.get("CAIRN_E2E_CLI_TIMEOUT", "1800"))
        try:
            done = subprocess.run(launch.argv, cwd=repo, env=child_env(launch), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=limit)
            exit_code, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as e:
            exit_code, stdout, stderr = "timeout", str(e.stdout or ""), str(e.stderr or "")
        wall = round(time.time() - started, 1)
        records = recorder.records()
    finally:
        recorder.close()
    keep = os.environ.get("CAIRN_E2E_CLI_CAPTURES")
    if keep:
        # Whole request bodies, for bench/cli_replay.py (one folder per session).
        dest = pathlib.Path(keep) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{prompts}-{attempt}"
        shutil.copytree(tmp_path / f"records-{attempt}", dest)
    rows = summarize(records, api)
    outcome = {"wall_s": wall, "exit": exit_code, "fixed": "a + b" in (repo / "main.py").read_text(),
               "attempt": attempt}
    context = f"{name}: exit {exit_code}\nstdout: {stdout[-1500:]}\nstderr: {stderr[-1500:]}\nrows: {rows}"
    return rows, outcome, context


# The protocol is checked on every attempt; what depends on the model's choices
# (calling a tool at all, so that a follow-up exists) gets up to three sessions,
# each in a directory of its own (run_session): Claude Code samples at
# temperature 1, and a greedy client's prompt (working directory, date) decides
# whether the small model answers with a tool call.
ATTEMPTS = 3


@pytest.mark.parametrize("name", list(CLIENTS))
def test_agent_cli_session(name, cli_bin_dir, cairn_server, scratch_repo, report_dir, prompts, tmp_path):
    launcher, api = CLIENTS[name]
    upstream, server_log = cairn_server
    for attempt in range(1, ATTEMPTS + 1):
        rows, outcome, context = run_session(name, launcher, api, cli_bin_dir, upstream, scratch_repo, tmp_path,
                                             prompts, attempt)
        write_report(report_dir, name, prompts, rows, outcome)

        generations = [r for r in rows if "prompt_tokens" in r]
        assert generations, f"the client sent no generation request\n{context}"
        errors = [r for r in rows if r["status"] >= 400]
        assert not errors, f"requests answered with 4xx/5xx: {errors}\n{context}"
        assert outcome["exit"] != "timeout", context
        follow_ups = [r for r in generations if r["follow_up_of"] is not None]
        for r in follow_ups:
            assert r["cached_tokens"] is not None and r["common_prefix"] is not None, r
            assert r["cached_tokens"] >= CACHED_FRACTION * r["common_prefix"], \
                f"follow-up #{r['n']} reused {r['cached_tokens']} of {r['common_prefix']} common tokens\n{context}"
        executed = any(r["tool_result"] for r in generations)
        if executed and follow_ups:
            break
        print(f"\n{name}: attempt {attempt}: the model made no tool call the client could run "
              f"(tool result seen: {executed}, follow-ups: {len(follow_ups)})", flush=True)
    assert executed, f"the client never executed a tool call in {ATTEMPTS} sessions\n{context}"
    assert follow_ups, f"no follow-up request in {ATTEMPTS} sessions\n{context}"
    assert "terminate called" not in server_log.read_text()
