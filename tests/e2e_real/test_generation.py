"""Generation features on real models through the real server and the OpenAI SDK."""
import math
import threading
import time

import openai
import pytest

from conftest import Answer, assert_same_tokens, chat, http_get, post_json, tag

PROMPT = "Write a Python function that parses a config file and returns a dict."


def user(text, prefix=None):
    return [{"role": "system", "content": (prefix or tag()) + "You write Python."},
            {"role": "user", "content": text}]


@pytest.fixture(params=["default", "dense"])
def server(request, servers):
    return servers.get(request.param)


NO_THINK = {"enable_thinking": False}  # the answer is plain content: token pieces == content


def test_stop_strings_never_leak(server):
    msgs = user(PROMPT)
    free = chat(server, msgs, cache=False, max_tokens=24, top_logprobs=0, template_kwargs=NO_THINK)
    pieces = [b for b, _, _ in free.logprobs]
    text = b"".join(pieces).decode("utf-8", "replace")
    assert free.content and free.reasoning == "", free.describe()  # these prompts yield plain content
    assert text == free.content
    # A stop string split across two tokens: the last char of token i + the first of token i+1.
    split_at = None
    for i in range(2, len(pieces) - 1):
        a, b = pieces[i].decode("utf-8", "ignore"), pieces[i + 1].decode("utf-8", "ignore")
        if a.strip() and b.strip():
            split_at = i
            break
    assert split_at is not None, free.describe()
    offset = len(b"".join(pieces[:split_at + 1]).decode("utf-8", "replace"))
    stop = free.content[offset - 1:offset + 1]
    want = free.content[:free.content.index(stop)]
    r = chat(server, msgs, cache=False, max_tokens=24, stop=[stop, "never-matches-xyz"], template_kwargs=NO_THINK)
    assert r.content == want, (stop, r.describe())
    assert stop not in r.content
    assert r.finish_reason == "stop"
    streamed = server.client().chat.completions.create(
        model="m", messages=msgs, max_tokens=24, temperature=0, stop=stop, stream=True,
        extra_body={"cache_prompt": False, "ignore_eos": True, "chat_template_kwargs": NO_THINK})
    chunks = list(streamed)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == want
    assert chunks[-1].choices[0].finish_reason == "stop"
    # A stop string that is a whole later token sequence, and one that never occurs.
    tail = free.content[len(free.content) // 2:][:6]
    r2 = chat(server, msgs, cache=False, max_tokens=24, stop=tail, template_kwargs=NO_THINK)
    assert r2.content == free.content[:free.content.index(tail)]
    r3 = chat(server, msgs, cache=False, max_tokens=24, stop="never-matches-xyz", template_kwargs=NO_THINK)
    assert r3.content == free.content and r3.finish_reason == "length"


def test_seed_reproducibility(server):
    msgs = user(PROMPT)
    kw = dict(cache=False, max_tokens=24, temperature=1.5, top_logprobs=0)
    a = chat(server, msgs, seed=1234, **kw)
    b = chat(server, msgs, seed=1234, **kw)
    assert a.tokens() == b.tokens() and a.content == b.content
    c = chat(server, msgs, seed=4321, **kw)
    assert c.tokens() != a.tokens(), "different seeds gave the same 24 sampled tokens"
    # The cache does not change a seeded sample either.
    d = chat(server, msgs, seed=1234, **{**kw, "cache": True})
    e = chat(server, msgs, seed=1234, **{**kw, "cache": True})
    assert e.cached > 0
    assert d.tokens() == a.tokens() == e.tokens()
    greedy = chat(server, msgs, cache=False, max_tokens=24, top_logprobs=0)
    assert greedy.tokens() != a.tokens(), "temperature 1.5 sampled exactly the greedy sequence"


def test_logprobs_consistent(server):
    r = chat(server, user(PROMPT), cache=False, max_tokens=12, top_logprobs=5, template_kwargs=NO_THINK)
    assert len(r.logprobs) == r.usage.completion_tokens == 12
    for tok, lp, top in r.logprobs:
        assert lp <= 0 and math.isfinite(lp)
        assert len(top) == 5
        values = [v for _, v in top]
        assert values == sorted(values, reverse=True)
        assert sum(math.exp(v) for v in values) <= 1.0 + 1e-4
        # greedy: the chosen token is the most likely one
        assert math.isclose(lp, values[0], abs_tol=1e-6)
        assert tok.decode("utf-8", "surrogateescape") == top[0][0] or tok == top[0][0].encode()
    assert b"".join(t for t, _, _ in r.logprobs).decode("utf-8", "replace") == r.content
    if r.token_ids is not None:
        assert len(r.token_ids) == 12
        status, body = post_json(server.base + "/detokenize", {"tokens": r.token_ids})
        assert status == 200 and body["content"] == r.content


def test_max_tokens_length_and_usage(server):
    r = chat(server, user(PROMPT), cache=False, max_tokens=5)
    assert r.finish_reason == "length"
    assert r.usage.completion_tokens == 5
    assert r.usage.total_tokens == r.usage.prompt_tokens + 5
    assert r.x["prompt_tokens"] == r.usage.prompt_tokens and r.x["completion_tokens"] == 5
    assert r.x["cached_tokens"] == 0 and r.x["decode_seconds"] >= 0 and r.x["ttft_seconds"] > 0
    # max_completion_tokens wins over max_tokens
    r2 = chat(server, user(PROMPT), cache=False, max_tokens=9, extra_body={"max_completion_tokens": 3})
    assert r2.usage.completion_tokens == 3


def test_eos_finish_reason_stop(server):
    # Bias the end-of-turn token to the top: the first sampled token ends the answer.
    [eot] = server.tokenize("<|im_end|>")
    r = server.client().chat.completions.create(
        model="m", messages=user(PROMPT), max_tokens=16, temperature=0, logit_bias={str(eot): 100},
        extra_body={"cache_prompt": False})
    assert r.choices[0].finish_reason == "stop"
    assert r.choices[0].message.content == ""
    assert r.usage.completion_tokens == 1
    # ignore_eos keeps going past it
    r2 = chat(server, user(PROMPT), cache=False, max_tokens=4, ignore_eos=True,
              extra_body={"logit_bias": {str(eot): 100}})
    assert r2.finish_reason == "length" and r2.usage.completion_tokens == 4


def test_logit_bias_forces_a_token(server):
    tok = server.tokenize(" banana", parse_special=False)[-1]
    status, body = post_json(server.base + "/detokenize", {"tokens": [tok]})
    assert status == 200
    r = chat(server, user(PROMPT), cache=False, max_tokens=4, extra_body={"logit_bias": {str(tok): 100}})
    assert r.content == body["content"] * 4
    if r.token_ids is not None:
        assert r.token_ids == [tok] * 4


def test_streaming_equals_non_streaming(server):
    msgs = user(PROMPT)
    whole = chat(server, msgs, cache=False, max_tokens=16, top_logprobs=2)
    chunks = list(server.client().chat.completions.create(
        model="m", messages=msgs, max_tokens=16, temperature=0, stream=True, logprobs=True, top_logprobs=2,
        stream_options={"include_usage": True}, extra_body={"cache_prompt": False, "ignore_eos": True,
                                                            "return_token_ids": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join((c.choices[0].delta.model_extra or {}).get("reasoning_content") or ""
                        for c in chunks if c.choices)
    assert reasoning == whole.reasoning
    lps = [e for c in chunks if c.choices and c.choices[0].logprobs and c.choices[0].logprobs.content
           for e in c.choices[0].logprobs.content]
    assert text == whole.content
    assert [bytes(e.bytes) for e in lps] == [b for b, _, _ in whole.logprobs]
    for e, (_, lp, _) in zip(lps, whole.logprobs):
        assert math.isclose(e.logprob, lp, abs_tol=1e-6)
    last = chunks[-1]
    assert last.usage.completion_tokens == whole.usage.completion_tokens == 16
    assert last.usage.prompt_tokens == whole.usage.prompt_tokens
    assert last.usage.prompt_tokens_details.cached_tokens == 0  # cache_prompt: false
    final = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(final) == 1 and final[0].choices[0].finish_reason == "length"
    x = final[0].model_extra.get("x_cairn") or last.model_extra.get("x_cairn")
    assert x["completion_tokens"] == 16
    if whole.token_ids is not None:
        assert x.get("completion_token_ids") == whole.token_ids


def test_completions_endpoint(server):
    prompt = tag() + "def parse_config(path):\n    \"\"\"Read a config file.\"\"\"\n"
    c = server.client()
    r = c.completions.create(model="m", prompt=prompt, max_tokens=12, temperature=0, logprobs=3,
                             extra_body={"cache_prompt": False, "ignore_eos": True})
    a = Answer(r)
    assert r.object == "text_completion" and r.id.startswith("cmpl-")
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 12
    assert r.usage.prompt_tokens == len(server.tokenize(prompt))
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == 12
    assert "".join(lp.tokens) == r.choices[0].text
    assert lp.text_offset[0] == 0 and lp.text_offset == sorted(lp.text_offset)
    for i, tok in enumerate(lp.tokens):
        assert math.isclose(lp.token_logprobs[i], max(lp.top_logprobs[i].values()), abs_tol=1e-6)
    streamed = "".join(ch.choices[0].text for ch in c.completions.create(
        model="m", prompt=prompt, max_tokens=12, temperature=0, stream=True,
        extra_body={"cache_prompt": False, "ignore_eos": True}))
    assert streamed == r.choices[0].text
    # Cached completion equals the cold one.
    hot1 = Answer(c.completions.create(model="m", prompt=prompt, max_tokens=12, temperature=0, logprobs=3,
                                       extra_body={"ignore_eos": True}))
    hot2 = Answer(c.completions.create(model="m", prompt=prompt, max_tokens=12, temperature=0, logprobs=3,
                                       extra_body={"ignore_eos": True}))
    assert hot2.cached > 0
    assert_same_tokens(hot1, a, "completion")
    assert_same_tokens(hot2, a, "cached completion")


def test_abort_mid_stream_then_success(server):
    msgs = user("Count from one to one thousand.")
    reference = chat(server, msgs, cache=False, max_tokens=8)
    client = server.client()
    stream = client.chat.completions.create(model="m", messages=msgs, max_tokens=3000, temperature=0,
                                            stream=True, extra_body={"ignore_eos": True, "cache_prompt": False})
    seen = 0
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            seen += 1
            if seen == 2:
                break
    stream.close()
    started = time.time()
    after = chat(server, msgs, cache=False, max_tokens=8)
    # The abandoned 3000-token generation stopped early: the next request did not wait for it.
    assert time.time() - started < 10
    assert_same_tokens(after, reference, "after abort")
    assert http_get(server.base + "/health")[0] == 200
    status, metrics = http_get(server.base + "/metrics")
    cancelled = [l for l in metrics.splitlines() if l.startswith("cairn_requests_cancelled_total")]
    assert cancelled and float(cancelled[0].split()[-1]) >= 1, cancelled


def test_health_and_metrics_while_generating(servers):
    server = servers.get("default")
    done = threading.Event()
    result = {}

    def run():
        result["r"] = chat(server, user("Count to a thousand."), cache=False, max_tokens=1500, top_logprobs=0)
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    answered = 0
    while not done.is_set():
        start = time.time()
        assert http_get(server.base + "/health", timeout=2.0)[0] == 200
        assert time.time() - start < 2.0
        if not done.is_set():
            answered += 1
        time.sleep(0.05)
    worker.join(60)
    assert result["r"].usage.completion_tokens == 1500
    assert answered >= 1


def test_prompt_too_long_is_400(servers):
    server = servers.get("dense", "--ctx", "256")
    with pytest.raises(openai.BadRequestError) as e:
        chat(server, user("word " * 400), max_tokens=4)
    assert "prompt is too long" in e.value.body["message"]
    r = chat(server, user("short"), max_tokens=4)
    assert r.usage.completion_tokens == 4
