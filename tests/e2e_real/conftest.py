"""Fixtures for the real-model end-to-end suite.

Every test here talks to the real `cairn serve` (not the fake engine of
tests/e2e) over loopback HTTP with the official OpenAI Python SDK. Models:

- `dense`:   `cairn mkmodel --arch qwen3 --preset tiny` (random init, real Qwen3 tokenizer + template)
- `hybrid`:  `cairn mkmodel --arch qwen35 --preset tiny --mtp` (Gated DeltaNet + attention, MTP head)
- `default`: models/cairn-default.gguf (tiny trained qwen35 hybrid with MTP; draft models/cairn-draft.gguf)
- `llama`:   `cairn mkmodel --arch llama --preset tiny` (dense, llama layout; a few scenarios only)
- draft for the tiny models: `mkmodel --arch qwen3 --preset tiny --seed 2` (same vocabulary)

Environment:
  CAIRN_BIN            the cairn binary (default: build-e2e/cairn, else build/cairn)
  CAIRN_E2E_THREADS    --threads for every server (default 1: on a loaded 2-core
                       machine one compute thread is several times faster than two)
  CAIRN_E2E_KEEP_LOGS  keep server logs (printed path) after the session

Servers are started lazily, one per (model, flags) configuration, shared by
the whole session and stopped with SIGTERM at the end (they must exit 0).
Tests keep their prompts disjoint (a per-test tag at the very start of the
system prompt) so cache hits observed in one test never come from another.
"""
import json
import math
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import openai
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THREADS = os.environ.get("CAIRN_E2E_THREADS", "1")
LOGPROB_TOL = 1e-4  # cached vs cold logprobs: the engine is bit-exact by design


def cairn_bin():
    env = os.environ.get("CAIRN_BIN")
    if env:
        return env
    for cand in ("build-e2e/cairn", "build/cairn"):
        path = os.path.join(ROOT, cand)
        if os.access(path, os.X_OK):
            return path
    pytest.fail("no cairn binary: build build-e2e (target cairn) or set CAIRN_BIN")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def post_json(url, body, timeout=60.0):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


class Server:
    def __init__(self, name, model, extra_args=(), log_dir=None):
        self.name = name
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # The disk tier would let one server's state reach another (and a
        # previous run's): off unless a test names a --cache-dir itself.
        disk = [] if any(a == "--cache-dir" for a in extra_args) else ["--no-disk-cache"]
        self.args = [cairn_bin(), "serve", "--model", model, "--host", "127.0.0.1", "--port",
                     str(self.port), "--threads", THREADS, *disk, *extra_args]
        self.log_path = os.path.join(log_dir or tempfile.gettempdir(), f"cairn-e2e-real-{name}-{self.port}.log")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{shlex.join(self.args)} exited with {self.process.returncode}:\n"
                                   + self.output())
            try:
                if http_get(self.base + "/health", timeout=1.0)[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("server did not become healthy:\n" + self.output())
            time.sleep(0.05)
        self.health = json.loads(http_get(self.base + "/health")[1])
        # Checkpoint mode (recurrent layers, or sliding-window KV as in gemma3):
        # reuse lands on checkpoints, like a hybrid model's.
        prefix_cache = self.health.get("prefix_cache")
        self.hybrid = bool(self.health.get("hybrid")) or (
            isinstance(prefix_cache, dict) and prefix_cache.get("mode") == "checkpoint")

    def output(self, tail=6000):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()[-tail:]

    def client(self, timeout=60.0):
        return openai.OpenAI(base_url=self.base + "/v1", api_key="none", max_retries=0, timeout=timeout)

    def cache_listing(self):
        return json.loads(http_get(self.base + "/cache")[1])

    def metrics(self):
        return http_get(self.base + "/metrics")[1]

    def tokenize(self, text, parse_special=True):
        status, body = post_json(self.base + "/tokenize", {"content": text, "parse_special": parse_special})
        assert status == 200, body
        return body["tokens"]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode


# --- models -------------------------------------------------------------------


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Paths of every model the suite serves; the tiny ones are made here."""
    out = tmp_path_factory.mktemp("models")
    specs = {
        "dense": ["--arch", "qwen3", "--preset", "tiny", "--seed", "1"],
        "hybrid": ["--arch", "qwen35", "--preset", "tiny", "--mtp", "--seed", "1"],
        "llama": ["--arch", "llama", "--preset", "tiny", "--seed", "3"],
        "tiny_draft": ["--arch", "qwen3", "--preset", "tiny", "--seed", "2"],
    }
    paths = {}
    for name, args in specs.items():
        path = str(out / f"{name}.gguf")
        subprocess.run([cairn_bin(), "mkmodel", *args, "--threads", THREADS, "-o", path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        paths[name] = path
    # Real published files (tools/fetch_models.py); None when not fetched:
    # the tests that need them skip and say why.
    for name, real in REAL_MODELS.items():
        found = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "fetch_models.py"), "--path", real],
                               capture_output=True, text=True)
        path = found.stdout.strip()
        paths[name] = path if found.returncode == 0 and path and os.path.exists(path) else None
    paths["default"] = os.path.join(ROOT, "models", "cairn-default.gguf")
    paths["default_draft"] = os.path.join(ROOT, "models", "cairn-draft.gguf")
    for name, p in paths.items():
        assert name in REAL_MODELS or os.path.exists(p), p
    yield paths
    shutil.rmtree(out, ignore_errors=True)  # ~110 MB; pytest would keep the last 3 runs' copies


# Real models the cache suite also runs on (names for tools/fetch_models.py).
REAL_MODELS = {"qwen2": "qwen2.5-coder-0.5b-instruct-q4_k_m", "gemma3": "gemma3-270m-q4_k_m"}

DRAFT_FOR = {"dense": "tiny_draft", "llama": "tiny_draft", "hybrid": "tiny_draft", "default": "default_draft"}


class ServerPool:
    """Starts servers on demand, one per configuration, for the whole session."""

    def __init__(self, models, log_dir):
        self.models = models
        self.log_dir = log_dir
        self.servers = {}
        self.lock = threading.Lock()

    def get(self, model, *args, draft=False):
        if self.models.get(model) is None:
            pytest.skip(f"real model {REAL_MODELS[model]} is not fetched (python3 tools/fetch_models.py --small)")
        args = list(args)
        if draft:
            args += ["--draft-model", self.models[DRAFT_FOR[model]]]
        key = (model, tuple(args))
        with self.lock:
            if key not in self.servers:
                name = model + "".join("_" + a.strip("-").replace("/", "_")[-12:] for a in args if a.startswith("--"))
                self.servers[key] = Server(name, self.models[model], args, self.log_dir)
            return self.servers[key]

    def stop_all(self):
        codes = {}
        for (model, args), server in self.servers.items():
            codes[server.name] = server.stop()
        return codes


@pytest.fixture(scope="session")
def servers(models, tmp_path_factory):
    log_dir = os.environ.get("CAIRN_E2E_LOG_DIR") or str(tmp_path_factory.mktemp("logs"))
    os.makedirs(log_dir, exist_ok=True)
    pool = ServerPool(models, log_dir)
    yield pool
    codes = pool.stop_all()
    bad = {name: code for name, code in codes.items() if code != 0}
    assert not bad, f"servers did not exit cleanly on SIGTERM: {bad} (logs in {log_dir})"


# --- requests -----------------------------------------------------------------


class Answer:
    """One chat/completion answer with what the lossless comparisons need."""

    def __init__(self, response, streamed=False):
        self.response = response
        extra = response.model_extra or {}
        self.x = extra.get("x_cairn") or {}
        choice = response.choices[0]
        self.finish_reason = choice.finish_reason
        if hasattr(choice, "message"):
            msg = choice.message
            self.content = msg.content or ""
            mextra = msg.model_extra or {}
            self.reasoning = mextra.get("reasoning_content") or ""
            self.tool_calls = msg.tool_calls
            lp = choice.logprobs.content if choice.logprobs and choice.logprobs.content else []
            self.logprobs = [(bytes(e.bytes), e.logprob, [(t.token, t.logprob) for t in e.top_logprobs])
                             for e in lp]
        else:  # text_completion
            self.content = choice.text or ""
            self.reasoning = ""
            self.tool_calls = None
            lp = choice.logprobs
            self.logprobs = []
            if lp is not None and lp.tokens is not None:
                for i, tok in enumerate(lp.tokens):
                    top = sorted((lp.top_logprobs[i] or {}).items(), key=lambda kv: -kv[1]) if lp.top_logprobs else []
                    self.logprobs.append((tok.encode("utf-8", "surrogateescape"), lp.token_logprobs[i], top))
        self.usage = response.usage
        self.token_ids = self.x.get("completion_token_ids")

    @property
    def cached(self):
        return self.usage.prompt_tokens_details.cached_tokens if self.usage and self.usage.prompt_tokens_details else 0

    @property
    def prompt_tokens(self):
        return self.usage.prompt_tokens

    @property
    def cache(self):
        return self.x.get("cache") or {}

    @property
    def spec(self):
        return self.x.get("spec") or {}

    def tokens(self):
        """The exact completion: token ids when the server returns them, else token bytes."""
        if self.token_ids is not None:
            return list(self.token_ids)
        return [b for b, _, _ in self.logprobs]

    def as_message(self):
        msg = {"role": "assistant", "content": self.content}
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.tool_calls:
            msg["tool_calls"] = [tc.model_dump() for tc in self.tool_calls]
        return msg

    def describe(self):
        return (f"content={self.content!r} reasoning={self.reasoning!r} finish={self.finish_reason} "
                f"usage={self.usage} cache={self.cache} spec={self.spec}")


def chat(server, messages, *, cache=True, max_tokens=8, spec=None, tools=None, ignore_eos=True,
         template_kwargs=None, top_logprobs=3, **kwargs):
    """Greedy chat request with logprobs and token ids requested."""
    extra = {"cache_prompt": cache, "ignore_eos": ignore_eos, "return_token_ids": True}
    if spec is not None:
        extra["spec"] = spec
    if template_kwargs is not None:
        extra["chat_template_kwargs"] = template_kwargs
    extra.update(kwargs.pop("extra_body", {}))
    params = dict(model="m", messages=messages, max_tokens=max_tokens, temperature=kwargs.pop("temperature", 0.0),
                  logprobs=True, top_logprobs=top_logprobs, extra_body=extra, **kwargs)
    if tools is not None:
        params["tools"] = tools
    with server.client() as client:
        return Answer(client.chat.completions.create(**params))


def assert_same_tokens(got, want, what=""):
    """Token-by-token equality (ids when available) and logprobs within tolerance."""
    g, w = got.tokens(), want.tokens()
    assert len(g) > 0, f"{what}: empty completion: {got.describe()}"
    if g != w:
        first = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
        pytest.fail(f"{what}: completion differs at token {first}: got {g[first:first + 4]} want "
                    f"{w[first:first + 4]}\n got:  {got.describe()}\n want: {want.describe()}")
    assert got.content == want.content, what
    assert got.reasoning == want.reasoning, what
    assert got.finish_reason == want.finish_reason, what
    assert len(got.logprobs) == len(want.logprobs), what
    for i, (a, b) in enumerate(zip(got.logprobs, want.logprobs)):
        assert a[0] == b[0], f"{what}: token {i} bytes differ"
        assert math.isclose(a[1], b[1], abs_tol=LOGPROB_TOL), f"{what}: token {i} logprob {a[1]} vs {b[1]}"
        assert [t for t, _ in a[2]] == [t for t, _ in b[2]], f"{what}: token {i} top tokens differ"
        for (_, la), (_, lb) in zip(a[2], b[2]):
            assert math.isclose(la, lb, abs_tol=LOGPROB_TOL), f"{what}: token {i} top logprobs differ"


def lossless(server, messages, what="", **kwargs):
    """The cached answer (cache on) must equal the cold one (cache_prompt: false)."""
    hot = chat(server, messages, cache=True, **kwargs)
    cold = chat(server, messages, cache=False, **kwargs)
    assert cold.cached == 0 and cold.cache.get("kind") == "off", cold.describe()
    assert_same_tokens(hot, cold, what)
    return hot


_tags = {}


def tag():
    """A prefix unique to this test and call, so a test's prompts share nothing with
    other tests' (cache hits come only from the test itself); deterministic, so a
    run is reproducible whatever -k selects."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    n = _tags[test] = _tags.get(test, 0) + 1
    return f"[session {uuid.uuid5(uuid.NAMESPACE_URL, f'{test}#{n}').hex[:12]}] "
