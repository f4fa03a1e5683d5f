"""Prefix cache through the real server: cached answers equal cold answers, and the cache hits.

Every scenario runs on the dense tiny model (trim mode), the hybrid tiny model
(checkpoint mode) and the trained default model (hybrid). Each request is sent
twice: with the cache (the answer under test) and with `cache_prompt: false`
(the cold reference, which neither reads nor writes the cache); the two must
agree token by token (ids, bytes, logprobs, top logprobs, finish reason).
"""
import json
import os
import socket
import sys
import time

import pytest

from conftest import Answer, assert_same_tokens, chat, http_get, lossless, post_json, tag

# qwen2 and gemma3 are real published files (skipped when not fetched); every
# prompt here is longer than gemma3's 512-token sliding window. A cold prompt
# costs them seconds, so they run the scenarios agents produce (REAL_SCENARIOS).
MODELS = ["dense", "hybrid", "default", "qwen2", "gemma3"]
REAL = {"qwen2", "gemma3"}
REAL_SCENARIOS = {"test_multi_turn_chat", "test_agent_tool_loop", "test_identical_retry",
                  "test_new_session_shares_system_prompt_and_tools", "test_branch_edit_earlier_message",
                  "test_interleaved_sessions", "test_cancelled_stream_then_retry", "test_eviction_then_rehit"}


def model_for(request, name):
    """Skips a real model outside REAL_SCENARIOS."""
    if name in REAL and request.function.__name__ not in REAL_SCENARIOS:
        pytest.skip(f"{name}: real models run the agent scenarios only ({request.function.__name__} is not one)")
    return use_model(name)
# A hybrid hit lands on a checkpoint at or below the common prefix; the
# checkpoints that matter here (stable boundary, message starts) sit at most a
# template's unstable tail (e.g. "<|im_start|>assistant\n<think>\n\n</think>\n\n")
# below the previous prompt's end.
# gemma3's template merges the system text into the first user turn, so the
# message-start checkpoint there sits up to ~10 tokens below a divergence in
# the turn's first words.
SLACK = 12

SYSTEM = (
    "You are Cairn, a careful coding assistant working inside a repository. Answer briefly. "
    "Prefer small, verifiable steps; read files before editing them; run the tests after "
    "every change and report the result. Never invent file contents. When a command fails, "
    "show the error and propose one fix at a time. The repository is a C++20 inference "
    "server with a Python test suite; its build uses CMake and Ninja.")
# Appended for the real models, so every prompt is longer than gemma3's
# 512-token sliding window (the tiny models keep the short prompt: several
# tests size budgets and limits to it).
REPO_GUIDE = (
    "\n\nRepository guide.\n" + "".join(
        f"- src/{layer}/: the {layer} layer. It depends only on the layers listed before it, has its own CMake "
        f"library named cairn_{layer}, and its tests live in tests/{layer}/ with the same file names plus _test. "
        f"Read src/{layer}/README or the header comments first; they give shapes, units and the reasons for "
        f"each design choice. Changes to {layer} need a test that fails before the change.\n"
        for layer in ("core", "kernels", "model", "cache", "engine", "server")))

TOOLS = [
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a file from the repository.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Relative path"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "run_shell", "description": "Run a shell command and return its output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"},
                                                        "timeout": {"type": "integer"}},
                       "required": ["command"]}}},
]

QUESTIONS = [
    "What does the prefix cache do when two requests share a system prompt?",
    "And what happens on a hybrid model whose recurrent state cannot be truncated?",
    "Which checkpoints does it keep, and where in the prompt are they placed?",
    "How is memory bounded when many sessions are active at once?",
    "Summarise the answer in one sentence.",
]


# The system text of the test in progress (set by the server fixtures).
CURRENT_SYSTEM = [SYSTEM]


def use_model(name):
    CURRENT_SYSTEM[0] = SYSTEM + REPO_GUIDE if name in REAL else SYSTEM
    return name


@pytest.fixture(autouse=True)
def short_system_by_default():
    """Autouse fixtures run before the server fixtures, which may switch to the long prompt."""
    CURRENT_SYSTEM[0] = SYSTEM


def sys_msg(prefix=""):
    return {"role": "system", "content": prefix + CURRENT_SYSTEM[0]}


def user(text):
    return {"role": "user", "content": text}


def assert_miss(a):
    assert a.cached == 0 and a.cache.get("kind") == "miss", a.describe()


def assert_hit(server, a, at_least, what=""):
    """The answer was served from the cache, reusing at least `at_least` prompt tokens."""
    c = a.cache
    if os.environ.get("CAIRN_E2E_DEBUG"):  # how close each hit is to its bound
        print(f"\nHIT {what}: cached={a.cached} at_least={at_least} slack_used={a.cached - at_least} lcp={c.get('common_prefix')} n={a.prompt_tokens} kind={c.get('kind')}", file=sys.stderr)
    assert a.cached > 0, f"{what}: expected a cache hit: {a.describe()}"
    assert a.cached == a.x["cached_tokens"] == c["cached_tokens"], what
    assert a.cached < a.prompt_tokens, what  # the last prompt token is always recomputed
    assert a.cached <= c["common_prefix"], what
    assert a.cached >= at_least, f"{what}: reused {a.cached} < {at_least}: {a.describe()}"
    if server.hybrid:
        assert c["kind"] in ("boundary", "message", "rung", "anchor", "end", "mark", "tail"), what
        # a checkpoint close to the true common prefix (message starts, the stable
        # boundary and the end of the last answer are all checkpointed)
        assert a.cached >= min(c["common_prefix"], a.prompt_tokens - 1) - SLACK, f"{what}: {a.describe()}"
    else:
        assert c["kind"] == "trim", what
        # trim mode reuses the whole common prefix (minus the last prompt token)
        assert a.cached == min(c["common_prefix"], a.prompt_tokens - 1), what


@pytest.fixture(params=MODELS)
def server(request, servers):
    return servers.get(model_for(request, request.param))


@pytest.fixture(params=MODELS + ["llama"])
def server_or_llama(request, servers):
    return servers.get(model_for(request, request.param))


def test_multi_turn_chat(server_or_llama):
    server = server_or_llama
    messages = [sys_msg(tag()), user(QUESTIONS[0])]
    prev = None
    for turn in range(5):
        a = lossless(server, messages, f"turn {turn}", ignore_eos=False, max_tokens=10)
        assert a.prompt_tokens >= 64
        if prev is None:
            assert_miss(a)
        else:
            assert_hit(server, a, prev.prompt_tokens - SLACK, f"turn {turn}")
        messages += [a.as_message(), user(QUESTIONS[(turn + 1) % len(QUESTIONS)])]
        prev = a


def tool_result(i):
    body = "\n".join(f"    line {j}: value_{i}_{j} = compute({j}, scale={i})" for j in range(12))
    return f"src/module_{i}.py (12 lines):\n{body}"


def test_agent_tool_loop(server_or_llama):
    server = server_or_llama
    messages = [sys_msg(tag()), user("The test test_scale fails in src/module_0.py. Find out why and fix it.")]
    prev = None
    for step in range(4):
        a = lossless(server, messages, f"tool round {step}", tools=TOOLS, ignore_eos=False, max_tokens=8)
        if prev is None:
            assert_miss(a)
        else:
            assert_hit(server, a, prev.prompt_tokens - SLACK, f"tool round {step}")
        call_id = f"call_{step}"
        name, args = (("read_file", {"path": f"src/module_{step}.py"}) if step % 2 == 0
                      else ("run_shell", {"command": f"pytest -q tests/test_{step}.py", "timeout": 60}))
        messages.append({"role": "assistant", "content": a.content,
                         "tool_calls": [{"id": call_id, "type": "function",
                                         "function": {"name": name, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": tool_result(step)})
        prev = a


def test_identical_retry(server):
    messages = [sys_msg(tag()), user(QUESTIONS[1])]
    first = chat(server, messages)
    assert_miss(first)
    second = lossless(server, messages, "retry")
    assert_hit(server, second, second.prompt_tokens - SLACK, "retry")
    if not server.hybrid:
        assert second.cached == second.prompt_tokens - 1
    assert second.tokens() == first.tokens()
    third = lossless(server, messages, "second retry")
    assert third.cached == second.cached
    # Streamed: the final chunk's usage and x_cairn report the same hit, and the text matches.
    with server.client() as client:
        chunks = list(client.chat.completions.create(
            model="m", messages=messages, max_tokens=8, temperature=0, stream=True,
            stream_options={"include_usage": True}, extra_body={"ignore_eos": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == third.content
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens == third.cached
    x = next(c.model_extra["x_cairn"] for c in reversed(chunks) if (c.model_extra or {}).get("x_cairn"))
    assert x["cached_tokens"] == third.cached and x["cache"]["kind"] == third.cache["kind"]


def test_new_session_shares_system_prompt_and_tools(server):
    prefix = tag()
    a_msgs = [sys_msg(prefix), user("Session A: list the files in src/.")]
    a1 = lossless(server, a_msgs, "session A", tools=TOOLS)
    assert_miss(a1)
    a_msgs += [a1.as_message(), user("Session A: now open the largest one.")]
    lossless(server, a_msgs, "session A turn 2", tools=TOOLS)

    b_msgs = [sys_msg(prefix), user("Session B: why is the build slow?")]
    b1 = lossless(server, b_msgs, "session B", tools=TOOLS)
    # The system prompt + tool definitions are long; session B reuses them.
    assert b1.cache["common_prefix"] >= 64, b1.describe()
    assert_hit(server, b1, b1.cache["common_prefix"] - SLACK, "session B")
    assert b1.cache.get("reason"), "a partial hit explains where the prompt diverged"
    div = b1.cache.get("divergence") or {}
    assert div.get("message_index") == 1 and div.get("role") == "user", b1.cache
    # A third session hits the same shared prefix.
    c1 = lossless(server, [sys_msg(prefix), user("Session C: what is ccache?")], "session C", tools=TOOLS)
    assert_hit(server, c1, b1.cached, "session C")


def conversation(server, prefix, turns, **kw):
    messages = [sys_msg(prefix), user(QUESTIONS[0])]
    answers = []
    for turn in range(turns):
        a = lossless(server, messages, f"turn {turn}", ignore_eos=False, max_tokens=8, **kw)
        answers.append(a)
        messages += [a.as_message(), user(QUESTIONS[turn + 1])]
    return messages, answers


def test_branch_edit_earlier_message(server):
    messages, answers = conversation(server, tag(), 4)
    # messages: [sys, u0, a0, u1, a1, u2, a2, u3, a3, u4]; edit u1 (index 3) and branch from there.
    branch = messages[:3] + [user("Forget that. Instead: how do I profile the decode loop?")]
    b = lossless(server, branch, "branch")
    # Everything before the edited message is shared: the answer to turn 0 ends before it.
    assert_hit(server, b, answers[0].prompt_tokens - SLACK, "branch")
    assert b.cache.get("divergence", {}).get("message_index") == 3, b.cache
    # Continue on the branch, then go back to the original line: both keep hitting.
    branch += [b.as_message(), user("Thanks.")]
    b2 = lossless(server, branch, "branch turn 2")
    assert_hit(server, b2, b.prompt_tokens - SLACK, "branch turn 2")
    back = lossless(server, messages, "back to the original line")
    assert_hit(server, back, answers[-1].prompt_tokens - SLACK, "original line")


def test_interleaved_sessions(server):
    sessions = {name: [sys_msg(tag() + name + ": "), user(QUESTIONS[0])] for name in ("agent", "chat")}
    prev = {}
    for turn in range(3):
        for name, messages in sessions.items():
            a = lossless(server, messages, f"{name} turn {turn}", ignore_eos=False, max_tokens=8)
            if name in prev:
                assert_hit(server, a, prev[name].prompt_tokens - SLACK, f"{name} turn {turn}")
            messages += [a.as_message(), user(QUESTIONS[turn + 1])]
            prev[name] = a


@pytest.mark.parametrize("thinking", [False, True], ids=["thinking_off", "thinking_on"])
def test_thinking_on_and_off(server, thinking):
    kwargs = {"enable_thinking": thinking}
    messages = [sys_msg(tag()), user(QUESTIONS[2])]
    prev = None
    for turn in range(3):
        a = lossless(server, messages, f"thinking={thinking} turn {turn}", template_kwargs=kwargs,
                     ignore_eos=False, max_tokens=10)
        if prev is not None:
            assert_hit(server, a, prev.prompt_tokens - SLACK, f"thinking={thinking} turn {turn}")
        messages += [a.as_message(), user(QUESTIONS[(turn + 3) % len(QUESTIONS)])]
        prev = a
    # Thinking off renders an empty think block into the generation prompt, so
    # the same conversation is a different prompt with and without it.
    other = chat(server, messages[:2], cache=False, template_kwargs={"enable_thinking": not thinking})
    first = chat(server, messages[:2], cache=False, template_kwargs=kwargs)
    assert other.prompt_tokens != first.prompt_tokens


def test_cancelled_stream_then_retry(server):
    messages = [sys_msg(tag()), user("Count slowly from one to five hundred, one number per line.")]
    stream = server.client().chat.completions.create(
        model="m", messages=messages, max_tokens=2000, temperature=0, stream=True,
        extra_body={"ignore_eos": True})
    received = 0
    for chunk in stream:
        if chunk.choices and (chunk.choices[0].delta.content or
                              (chunk.choices[0].delta.model_extra or {}).get("reasoning_content")):
            received += 1
            if received == 3:
                break
    stream.close()
    assert received == 3
    retry = lossless(server, messages, "retry after cancel")
    # The cancelled request inserted its prompt (and the tokens it verified).
    assert_hit(server, retry, retry.prompt_tokens - SLACK, "retry after cancel")
    deadline = time.time() + 10
    while "client disconnected" not in server.output(100000) and time.time() < deadline:
        time.sleep(0.1)
    assert "client disconnected" in server.output(100000), "the server did not stop the abandoned stream"
    again = lossless(server, messages, "second retry after cancel")
    assert again.cached >= retry.cached


@pytest.mark.parametrize("model", MODELS)
def test_eviction_then_rehit(servers, model):
    # A 1 MiB budget holds only a few KV blocks (and snapshots): sessions evict each other.
    # gemma3's window snapshot alone is ~10 MiB: 24 MiB holds two of its sessions.
    use_model(model)
    budget_mb = 24 if model == "gemma3" else 1
    small = servers.get(model, "--cache-ram-mb", str(budget_mb))
    prefix = tag()
    target = [sys_msg(prefix), user(QUESTIONS[0] + " " + tool_result(0))]
    a1 = lossless(small, target, "first")
    assert_miss(a1)
    a2 = lossless(small, target, "immediate retry")
    reference = a2.tokens()
    for i in range(4):  # other sessions, each at least as long, push the target out
        lossless(small, [sys_msg(tag()), user(QUESTIONS[i] + " " + tool_result(i + 1))], f"filler {i}")
    listing = small.cache_listing()
    assert listing["bytes"] <= listing["budget_bytes"] == budget_mb << 20, listing
    metrics = small.metrics()
    evictions = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                    if line.startswith("cairn_cache_evictions") and not line.startswith("#"))
    assert evictions > 0, f"a {budget_mb} MiB budget must have evicted something:\n" + metrics
    after = lossless(small, target, "after eviction")  # hit or miss, the answer is the same
    assert after.tokens() == reference
    rehit = lossless(small, target, "re-hit")
    assert rehit.tokens() == reference
    assert rehit.cached > 0, rehit.describe()
    assert http_get(small.base + "/health")[0] == 200


def test_divergence_inside_system_prompt_then_anchor(server):
    """The classic silent miss: a date at the end of the system prompt. The miss (or
    partial hit) names the position, message and both snippets; the next request of
    that shape hits at the divergence point (an anchor on hybrid models)."""
    prefix = tag()

    def msgs(day):
        return [{"role": "system", "content": prefix + SYSTEM + f" Today is 2026-11-{day:02d}."},
                user(QUESTIONS[0])]

    a = lossless(server, msgs(1), "day 1")
    assert_miss(a)
    b = lossless(server, msgs(2), "day 2")
    c = b.cache
    assert c["common_prefix"] >= 64, c
    div = c.get("divergence") or {}
    assert div.get("message_index") == 0 and div.get("role") == "system", c
    assert div.get("position") == c["common_prefix"], c
    assert "1" in div.get("cached_text", "") and "2" in div.get("prompt_text", ""), c
    assert c.get("reason"), c
    if server.hybrid:
        # no checkpoint inside the system message yet: a miss that plants an anchor
        assert b.cached == 0 and c["kind"] == "miss", b.describe()
    else:
        assert_hit(server, b, c["common_prefix"], "day 2")
    d = lossless(server, msgs(3), "day 3")
    assert_hit(server, d, d.cache["common_prefix"] - (1 if server.hybrid else 0), "day 3")
    if server.hybrid:
        assert d.cache["kind"] == "anchor", d.cache


@pytest.mark.parametrize("model", ["hybrid", "default"])
def test_rung_hit_inside_a_long_message(servers, model):
    """--cache-rung-tokens 64: an edit deep inside one long message hits the rung below it."""
    server = servers.get(model, "--cache-rung-tokens", "64")
    prefix = tag()
    body = "\n".join(f"{i:03d}: value_{i} = compute({i}, scale={i % 7})" for i in range(40))

    def msgs(tail):
        return [sys_msg(prefix), user("Review this file:\n" + body + "\n" + tail)]

    a = lossless(server, msgs("Is it correct?"), "first")
    assert_miss(a)
    b = lossless(server, msgs("Any bugs?"), "edited tail")
    lcp = b.cache["common_prefix"]
    assert lcp >= 200, b.cache
    assert b.cache["kind"] in ("rung", "anchor"), b.cache
    assert lcp - 64 < b.cached <= lcp, b.describe()
    assert b.cached % 64 == 0 or b.cache["kind"] == "anchor", b.describe()


def test_short_request_does_not_evict_long_conversation(servers):
    """Short-prompt guard: with the budget full of one long entry, a short request (a
    title generation) is not cached rather than evicting it. Dense tiny model, 1 MiB
    budget = 16 KV blocks of 64 tokens; the long entry is sized to take all 16."""
    server = servers.get("dense", "--cache-ram-mb", "1")
    listing = server.cache_listing()
    budget = listing["budget_bytes"]
    prefix = tag()
    lines = [f"    line {j}: value_{j} = compute({j}, scale={j % 5})" for j in range(200)]

    def long_msgs(n):
        return [sys_msg(prefix), user("Review:\n" + "\n".join(lines[:n]) + "\n" + QUESTIONS[0])]

    max_tokens = 8
    n = 30
    for _ in range(6):  # size the prompt: cached entry = prompt + max_tokens - 1 tokens in (960, 1024]
        probe = chat(server, long_msgs(n), cache=False, max_tokens=1)
        entry = probe.prompt_tokens + max_tokens - 1
        if 960 < entry <= 1024:
            break
        per_line = (probe.prompt_tokens - 130) / n
        n = max(1, int(n + (992 - entry) / per_line))
    assert 960 < entry <= 1024, entry
    first = lossless(server, long_msgs(n), "long", max_tokens=max_tokens)
    listing = server.cache_listing()
    mine = [e for e in listing["entries"] if e["tokens"] == entry]
    assert mine and listing["bytes"] == budget, listing  # the long entry fills the budget exactly
    short = [{"role": "user", "content": tag() + "Title for this chat?"}]
    chat(server, short, max_tokens=4)
    chat(server, short, max_tokens=4)
    assert server.cache_listing()["bytes"] <= budget
    again = lossless(server, long_msgs(n), "long again", max_tokens=max_tokens)
    assert_hit(server, again, first.prompt_tokens - 1, "long entry after a short request")


def test_cancel_during_prefill_then_retry(servers):
    """A client that leaves during a long prefill (hybrid default model, ~3.4k tokens):
    the checkpoints taken before the cut stay valid and serve the retry, losslessly."""
    server = servers.get("default", "--keepalive", "1", "--cache-rung-tokens", "256")
    body = "\n".join(f"{i:04d}: value_{i} = compute({i}, scale={i % 7}, name='item_{i}')" for i in range(120))
    messages = [sys_msg(tag()), user("Review:\n" + body)]
    request = json.dumps({"messages": messages, "max_tokens": 8, "stream": True, "temperature": 0}).encode()
    before = server.output(10 ** 7)
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(request) + request)
    sock.settimeout(30)
    head = sock.recv(64)  # the status line goes out at the first sign of life (prefill progress)
    assert head.startswith(b"HTTP/1.1 200"), head
    sock.close()
    retry = lossless(server, messages, "retry after a cancelled prefill")
    assert_hit(server, retry, 256, "retry after a cancelled prefill")
    log = server.output(10 ** 7)
    assert log.count("client disconnected") == before.count("client disconnected") + 1, log[-2000:]
    if log.count("after 0 tokens") > before.count("after 0 tokens"):  # cut inside the prefill: a partial hit
        assert retry.cached < retry.prompt_tokens - SLACK, retry.describe()


def test_cache_flags_no_prefix_cache_and_min_reuse(servers):
    off = servers.get("hybrid", "--no-prefix-cache")
    messages = [sys_msg(tag()), user(QUESTIONS[0])]
    a = chat(off, messages)
    b = chat(off, messages)
    assert a.cached == b.cached == 0 and b.cache["kind"] == "off", b.describe()
    assert a.tokens() == b.tokens()
    assert off.cache_listing()["enabled"] is False
    assert off.health["prefix_cache"]["enabled"] is False

    strict = servers.get("dense", "--cache-min-reuse", "200")
    assert strict.health["prefix_cache"]["min_reuse"] == 200
    short = [sys_msg(tag()), user(QUESTIONS[1])]  # ~130 tokens: below the minimum reuse
    first = chat(strict, short)
    again = lossless(strict, short, "below min reuse")
    assert first.prompt_tokens < 200
    assert again.cached == 0 and again.cache["kind"] == "miss", again.describe()
    assert "min_reuse" in again.cache.get("reason", ""), again.cache
    long = [sys_msg(tag()), user(QUESTIONS[1] + " " + tool_result(3))]
    chat(strict, long)
    hit = lossless(strict, long, "above min reuse")
    assert hit.prompt_tokens > 200
    assert_hit(strict, hit, hit.prompt_tokens - 1, "above min reuse")


def exact_prompt(server, text, n):
    """A prefix of `text` that tokenizes to exactly n tokens (raw completion prompt)."""
    ids = server.tokenize(text, parse_special=False)
    for cut in range(n, min(n + 8, len(ids))):
        status, body = post_json(server.base + "/detokenize", {"tokens": ids[:cut]})
        assert status == 200
        candidate = body["content"]
        if len(server.tokenize(candidate, parse_special=False)) == n:
            return candidate
    pytest.fail(f"no prefix of exactly {n} tokens")


@pytest.mark.parametrize("model", [m for m in MODELS if m not in REAL])
def test_prompts_at_kv_block_boundaries(servers, model):
    """Prompts of 64k - 1, 64k, 64k + 1 tokens (KV blocks are 64 tokens): the reused prefix
    ends inside, at the end of, and just past a block; completions stay exact."""
    server = servers.get(model)
    text = tag() + " ".join(f"item{i} = value{i * 7 % 13};" for i in range(200))
    with server.client() as client:
        def run(prompt, cache):
            return Answer(client.completions.create(
                model="m", prompt=prompt, max_tokens=6, temperature=0, logprobs=2,
                extra_body={"cache_prompt": cache, "ignore_eos": True, "return_token_ids": True}))

        for n in (127, 128, 129, 192, 193):
            prompt = exact_prompt(server, text, n)
            assert len(server.tokenize(prompt, parse_special=False)) == n
            cold = run(prompt, False)
            hot = run(prompt, True)
            assert_same_tokens(hot, cold, f"{n} tokens, first")
            again = run(prompt, True)
            assert again.cached > 0, again.describe()
            assert_same_tokens(again, cold, f"{n} tokens, hit")
