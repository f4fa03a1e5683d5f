"""The server driven by the official OpenAI Python SDK (see conftest.py)."""
import concurrent.futures
import json
import threading
import time
import urllib.request

import openai
import pytest

from conftest import SANITIZED, http_get


def user(text):
    return [{"role": "user", "content": text}]


def long_request(server, tokens=300):
    """A generation that runs for a while (seconds), on the fake or a real model."""
    if server.fake:
        return dict(messages=user("[long] [delay=10] go"), max_tokens=tokens)
    return dict(messages=user("Count from 1 to 2000, separated by spaces."), max_tokens=tokens,
                extra_body={"ignore_eos": True})


def post_json(url, body, headers=None):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_chat_non_streaming(server):
    r = server.client().chat.completions.create(model="anything", messages=user("hello world"),
                                                max_tokens=32)
    assert r.object == "chat.completion"
    assert r.id.startswith("chatcmpl-")
    assert r.model == "anything"  # echoed
    choice = r.choices[0]
    assert choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    x = r.model_extra["x_cairn"]
    assert x["prompt_tokens"] == r.usage.prompt_tokens
    assert x["completion_tokens"] == r.usage.completion_tokens
    assert {"ttft_seconds", "prefill_seconds", "decode_seconds", "queue_seconds", "cache", "spec",
            "decode_tokens_per_sec", "prefill_tokens_per_sec"} <= set(x)
    if server.fake:
        assert choice.message.content == "HELLO WORLD"
        assert choice.finish_reason == "stop"
        assert r.usage.prompt_tokens == 33  # "<|user|>hello world\n<|assistant|>" in byte tokens
        assert r.usage.completion_tokens == 11
    else:
        assert r.usage.completion_tokens > 0


def test_chat_streaming_with_usage_and_reasoning(server):
    text = "[think] stream me" if server.fake else "Say hi."
    stream = server.client().chat.completions.create(
        model="m", messages=user(text), max_tokens=64, stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                        for c in chunks if c.choices)
    last = chunks[-1]
    assert last.choices[0].finish_reason in ("stop", "length")
    assert last.usage is not None and last.usage.completion_tokens > 0
    assert "x_cairn" in last.model_extra
    assert len({c.id for c in chunks}) == 1
    if server.fake:
        assert content == "STREAM ME"
        assert reasoning == "thinking..."
        assert last.usage.completion_tokens == len("thinking...") + len("STREAM ME")
    else:
        assert content or reasoning
    # Without include_usage there is no usage, but x_cairn still arrives.
    chunks = list(server.client().chat.completions.create(model="m", messages=user("x"), max_tokens=4,
                                                          stream=True))
    assert chunks[-1].usage is None
    assert "x_cairn" in chunks[-1].model_extra


def test_completions(server):
    c = server.client()
    prompt = "abc" if server.fake else "The capital of France is"
    r = c.completions.create(model="m", prompt=prompt, max_tokens=2, logprobs=2)
    assert r.object == "text_completion"
    assert r.id.startswith("cmpl-")
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == r.usage.completion_tokens
    assert "".join(lp.tokens) == r.choices[0].text
    if server.fake:
        assert r.choices[0].text == "AB"
        assert r.choices[0].finish_reason == "length"
        assert lp.tokens == ["A", "B"]
        assert lp.token_logprobs == [0.0, -0.25]
        assert lp.top_logprobs[1] == {"B": -0.25, "b": -1.25}
        assert lp.text_offset == [0, 1]
        assert r.usage.prompt_tokens == 3
    text = "".join(ch.choices[0].text for ch in c.completions.create(model="m", prompt=prompt, max_tokens=3,
                                                                     stream=True))
    if server.fake:
        assert text == "ABC"


def test_cached_tokens_on_repeat(server):
    c = server.client()
    messages = user("Please remember this sentence about caching prefixes. " * 4)
    c.chat.completions.create(model="m", messages=messages, max_tokens=4)
    again = c.chat.completions.create(model="m", messages=messages, max_tokens=4)
    cached = again.usage.prompt_tokens_details.cached_tokens
    assert cached == again.model_extra["x_cairn"]["cached_tokens"]
    assert 0 < cached < again.usage.prompt_tokens
    if server.fake:
        assert cached == again.usage.prompt_tokens - 1
    off = c.chat.completions.create(model="m", messages=messages, max_tokens=4, extra_body={"cache_prompt": False})
    assert off.usage.prompt_tokens_details.cached_tokens == 0


def test_stop_strings(server):
    c = server.client()
    if server.fake:
        r = c.chat.completions.create(model="m", messages=user("hello world"), stop=[" W", "zzz"])
        assert r.choices[0].message.content == "HELLO"
        assert r.choices[0].finish_reason == "stop"
        streamed = "".join(ch.choices[0].delta.content or "" for ch in c.chat.completions.create(
            model="m", messages=user("hello world"), stop="LD", stream=True) if ch.choices)
        assert streamed == "HELLO WOR"
    else:
        r = c.chat.completions.create(model="m", messages=user("Count from 1 to 20 with commas."),
                                      max_tokens=64, stop=["7"])
        assert "7" not in r.choices[0].message.content


def test_seed_reproducibility(server):
    c = server.client()
    kwargs = dict(model="m", messages=user("pick a number"), max_tokens=32, temperature=1.0)
    a = c.chat.completions.create(seed=1234, **kwargs).choices[0].message.content
    b = c.chat.completions.create(seed=1234, **kwargs).choices[0].message.content
    assert a == b
    if server.fake:
        assert a.startswith("PICK A NUMBER #")
        other = c.chat.completions.create(seed=99, **kwargs).choices[0].message.content
        assert other != a


def test_chat_logprobs(server):
    r = server.client().chat.completions.create(model="m", messages=user("ab"), max_tokens=2, logprobs=True,
                                                top_logprobs=2)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for entry in content:
        assert entry.logprob <= 0
        assert entry.bytes == list(entry.token.encode("utf-8", "surrogateescape"))
        assert len(entry.top_logprobs) == 2
    if server.fake:
        assert [e.token for e in content] == ["A", "B"]
        assert [t.token for t in content[0].top_logprobs] == ["A", "b"]


def test_request_errors(server):
    c = server.client()
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"},
                                                       {"role": "robot", "content": "b"}])
    assert e.value.status_code == 400
    assert e.value.body["message"] == "messages[1].role: unknown role 'robot'"
    assert e.value.body["type"] == "invalid_request_error"
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model="m", messages=[])
    assert e.value.body["message"] == "messages: must not be empty"
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model="m", messages=user("a"), n=2)
    assert e.value.body["message"] == "n: only n=1 is supported"
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model="m", messages=user("a"), temperature=-1)
    assert e.value.body["message"].startswith("temperature: must be between 0 and")
    with pytest.raises(openai.BadRequestError) as e:
        c.chat.completions.create(model="m", messages=user("word " * 300000), max_tokens=1)
    assert "prompt is too long" in e.value.body["message"]
    with pytest.raises(openai.BadRequestError) as e:  # streaming: still a real 400
        list(c.chat.completions.create(model="m", messages=user("word " * 300000), stream=True))
    assert "prompt is too long" in e.value.body["message"]
    with pytest.raises(openai.NotFoundError) as e:
        c.get("/nope", cast_to=object)
    assert e.value.body["type"] == "not_found"
    status, body = post_json(server.base + "/v1/chat/completions", {"messages": "nope"})
    assert status == 400 and body["error"]["message"] == "messages: must be an array, got a string"
    # Still healthy after all of that.
    assert http_get(server.base + "/health")[0] == 200


def test_api_key(keyed_server):
    with pytest.raises(openai.AuthenticationError) as e:
        keyed_server.client(api_key="wrong").chat.completions.create(model="m", messages=user("a"), max_tokens=2)
    assert e.value.status_code == 401
    assert e.value.body["type"] == "authentication_error"
    r = keyed_server.client(api_key="e2e-secret").chat.completions.create(model="m", messages=user("a"),
                                                                          max_tokens=2)
    assert r.choices[0].message.content is not None
    status, body = http_get(keyed_server.base + "/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    assert http_get(keyed_server.base + "/v1/models")[0] == 401
    assert http_get(keyed_server.base + "/v1/models", headers={"x-api-key": "e2e-secret"})[0] == 200


def test_client_abort_then_success(server):
    c = server.client()
    stream = c.chat.completions.create(stream=True, model="m", **long_request(server, 2000))
    received = 0
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
            if received == 3:
                break
    stream.close()
    assert received == 3
    r = c.chat.completions.create(model="m", messages=user("after abort"), max_tokens=16)
    if server.fake:
        assert r.choices[0].message.content == "AFTER ABORT"
    else:
        assert r.usage.completion_tokens > 0


def test_health_during_long_generation(server):
    c = server.client()
    done = threading.Event()
    result = {}

    def generate():
        result["r"] = c.chat.completions.create(model="m", **long_request(server, 300))
        done.set()

    worker = threading.Thread(target=generate)
    worker.start()
    time.sleep(0.5)
    answered_while_running = 0
    for _ in range(3):
        start = time.time()
        status, body = http_get(server.base + "/health", timeout=2.0)
        assert status == 200 and json.loads(body)["status"] == "ok"
        assert time.time() - start < 2.0
        assert http_get(server.base + "/metrics", timeout=2.0)[0] == 200
        if not done.is_set():
            answered_while_running += 1
        time.sleep(0.2)
    assert answered_while_running >= 1
    worker.join(timeout=120)
    assert result["r"].usage.completion_tokens == 300


def test_concurrent_load_with_aborts(server):
    clients, per_client = (4, 5) if SANITIZED else (8, 20)
    max_tokens = 8 if not server.fake else 32
    outcomes = {"ok": 0, "aborted": 0, "refused": 0}
    lock = threading.Lock()

    def run(client_index):
        c = server.client(timeout=300.0)
        for i in range(per_client):
            text = f"client {client_index} request {i}"
            try:
                if (client_index + i) % 5 == 0:  # walk away mid-stream
                    stream = c.chat.completions.create(model="m", messages=user(text + " [delay=5]"),
                                                       max_tokens=max_tokens, stream=True)
                    next(iter(stream))
                    stream.close()
                    kind = "aborted"
                elif i % 2:
                    chunks = list(c.chat.completions.create(model="m", messages=user(text),
                                                            max_tokens=max_tokens, stream=True))
                    content = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
                    assert chunks[-1].choices[0].finish_reason in ("stop", "length")
                    if server.fake:
                        assert content == text.upper()
                    kind = "ok"
                else:
                    r = c.chat.completions.create(model="m", messages=user(text), max_tokens=max_tokens)
                    if server.fake:
                        assert r.choices[0].message.content == text.upper()
                    kind = "ok"
            except openai.APIStatusError as e:  # a clean refusal (e.g. 503), never a dropped connection
                assert e.status_code in (429, 503), e
                kind = "refused"
            with lock:
                outcomes[kind] += 1

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(run, k) for k in range(clients)]:
            future.result(timeout=600)
    assert sum(outcomes.values()) == clients * per_client
    assert outcomes["ok"] > 0 and outcomes["aborted"] > 0
    assert http_get(server.base + "/health")[0] == 200
    r = server.client().chat.completions.create(model="m", messages=user("still fine"), max_tokens=16)
    if server.fake:
        assert r.choices[0].message.content == "STILL FINE"
    status, metrics = http_get(server.base + "/metrics")
    assert status == 200 and 'cairn_http_requests_total{route="/chat/completions",method="POST",status="200"}' in metrics
