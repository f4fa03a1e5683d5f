"""A bounded load test on the real default model: 8 clients x 20 requests, some aborting."""
import concurrent.futures
import threading
import time

import openai

from conftest import assert_same_tokens, chat, http_get, tag

CLIENTS, PER_CLIENT, MAX_TOKENS, TIME_BOUND = 8, 20, 6, 120.0


def test_concurrent_clients_with_aborts(servers):
    server = servers.get("default")
    prefix = tag()
    probe = [{"role": "system", "content": prefix + "You answer questions about Python."},
             {"role": "user", "content": "What does functools.lru_cache do?"}]
    before = chat(server, probe, cache=False, max_tokens=MAX_TOKENS)
    outcomes = {"ok": 0, "aborted": 0, "refused": 0}
    errors = []
    lock = threading.Lock()
    deadline = time.time() + TIME_BOUND

    def run(k):
        client = server.client(timeout=60.0)
        history = [{"role": "system", "content": prefix + f"Client {k}. You answer questions about Python."}]
        for i in range(PER_CLIENT):
            if time.time() > deadline:
                return
            history.append({"role": "user", "content": f"Question {i} from client {k}: explain module {i}."})
            kind = "ok"
            try:
                if (k + i) % 5 == 0:  # walk away mid-stream
                    stream = client.chat.completions.create(model="m", messages=history, max_tokens=400,
                                                            stream=True, extra_body={"ignore_eos": True})
                    next(iter(stream))
                    stream.close()
                    history.pop()
                    kind = "aborted"
                elif i % 2:
                    chunks = list(client.chat.completions.create(model="m", messages=history, stream=True,
                                                                 max_tokens=MAX_TOKENS, temperature=0,
                                                                 stream_options={"include_usage": True}))
                    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
                    assert finish in (["stop"], ["length"]), finish
                    assert chunks[-1].usage.completion_tokens >= 1
                    history.append({"role": "assistant", "content": text})
                else:
                    r = client.chat.completions.create(model="m", messages=history, max_tokens=MAX_TOKENS,
                                                       temperature=0)
                    assert r.choices[0].finish_reason in ("stop", "length")
                    assert r.usage.completion_tokens >= 1
                    if i >= 2:  # this client's conversation so far is cached
                        assert r.usage.prompt_tokens_details.cached_tokens > 0, r.model_extra["x_cairn"]["cache"]
                    history.append({"role": "assistant", "content": r.choices[0].message.content or ""})
            except openai.APIStatusError as e:  # a clean refusal, never a dropped connection
                assert e.status_code in (429, 503), e
                history.pop()
                kind = "refused"
            except Exception as e:  # noqa: BLE001 - collected and reported below
                with lock:
                    errors.append(f"client {k} request {i}: {type(e).__name__}: {e}")
                return
            with lock:
                outcomes[kind] += 1

    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        futures = [pool.submit(run, k) for k in range(CLIENTS)]
        done, pending = concurrent.futures.wait(futures, timeout=TIME_BOUND + 30)
    elapsed = time.time() - started
    assert not pending, "load test hung"
    assert not errors, "\n".join(errors)
    assert sum(outcomes.values()) == CLIENTS * PER_CLIENT, (outcomes, elapsed)
    assert outcomes["ok"] > 0 and outcomes["aborted"] > 0
    assert http_get(server.base + "/health")[0] == 200
    # Still serving, and still exact (cached or not).
    after = chat(server, probe, cache=False, max_tokens=MAX_TOKENS)
    assert_same_tokens(after, before, "after load")
    hot = chat(server, probe, max_tokens=MAX_TOKENS)
    hot2 = chat(server, probe, max_tokens=MAX_TOKENS)
    assert hot2.cached > 0
    assert_same_tokens(hot2, before, "cached after load")
    assert_same_tokens(hot, before, "cache insert after load")
    status, metrics = http_get(server.base + "/metrics")
    assert status == 200
    cancelled = [l for l in metrics.splitlines() if l.startswith("cairn_requests_cancelled_total")]
    assert cancelled and float(cancelled[0].split()[-1]) >= 1


def test_concurrent_speculative_sessions_stay_exact(servers):
    """4 clients run multi-turn sessions at once on one server, each request with a
    different speculative mode and the prefix cache on; every answer must equal the cold
    baseline answer for the same conversation (checked afterwards, one by one)."""
    server = servers.get("default", draft=True)
    modes = ["lookup", "draft", "mtp", "auto"]
    prefix = tag()
    records = {}
    errors = []

    def run(k):
        try:
            history = [{"role": "system", "content": prefix + f"Client {k}. You answer questions about Python."}]
            for turn in range(5):
                history.append({"role": "user", "content": f"Turn {turn}: what does module {k * 10 + turn} do?"})
                a = chat(server, list(history), spec=modes[(k + turn) % len(modes)], max_tokens=12,
                         ignore_eos=False, top_logprobs=0)
                records[(k, turn)] = (list(history), a)
                history.append(a.as_message())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"client {k}: {type(e).__name__}: {e}")

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        done, pending = concurrent.futures.wait([pool.submit(run, k) for k in range(4)], timeout=TIME_BOUND)
    assert not pending and not errors, errors
    assert len(records) == 20
    hits = 0
    for (k, turn), (history, a) in sorted(records.items()):
        cold = chat(server, history, cache=False, spec="baseline", max_tokens=12, ignore_eos=False, top_logprobs=0)
        assert_same_tokens(a, cold, f"client {k} turn {turn} ({a.spec.get('mode')})")
        hits += a.cached > 0
    assert hits >= 16, f"only {hits} of 20 requests hit the cache"
