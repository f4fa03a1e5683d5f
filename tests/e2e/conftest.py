"""Fixtures: a Cairn server process on a free loopback port.

The server command comes from CAIRN_E2E_SERVER_CMD (a shell-quoted command; the
fixture appends --host/--port and, for the auth tests, --api-key), e.g.

    CAIRN_E2E_SERVER_CMD=build-server/cairn_fake_server pytest tests/e2e

Default: `build/cairn serve --model $CAIRN_E2E_MODEL`. Against the fake
service (model id "fake-model") the tests also assert its exact,
deterministic output; against a real model only what must hold for any model.
"""
import json
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import openai
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SANITIZED = os.environ.get("CAIRN_SANITIZED") == "1"


def server_command():
    cmd = os.environ.get("CAIRN_E2E_SERVER_CMD")
    if cmd:
        return shlex.split(cmd)
    model = os.environ.get("CAIRN_E2E_MODEL")
    if not model:
        pytest.skip("set CAIRN_E2E_SERVER_CMD (e.g. the cairn_fake_server binary) or CAIRN_E2E_MODEL")
    return [os.path.join(ROOT, "build", "cairn"), "serve", "--model", model]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5.0, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Server:
    def __init__(self, extra_args=()):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        args = server_command() + ["--host", "127.0.0.1", "--port", str(self.port), *extra_args]
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"cairn-e2e-{self.port}.log"), "w+")
        self.process = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + float(os.environ.get("CAIRN_E2E_START_TIMEOUT", "180"))
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: {self.output()}")
            try:
                if http_get(self.base + "/health", timeout=1.0)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError("server did not become healthy: " + self.output())
        models = json.loads(http_get(self.base + "/v1/models", headers=self.auth_headers(extra_args))[1])
        self.model = models["data"][0]["id"] if "data" in models else "unknown"
        self.fake = self.model == "fake-model"

    @staticmethod
    def auth_headers(extra_args):
        args = list(extra_args)
        if "--api-key" in args:
            return {"Authorization": "Bearer " + args[args.index("--api-key") + 1]}
        return {}

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def client(self, api_key="none", **kwargs):
        return openai.OpenAI(base_url=self.base + "/v1", api_key=api_key, max_retries=0,
                             timeout=kwargs.pop("timeout", 120.0), **kwargs)

    def stop(self):
        """SIGTERM; the server must exit cleanly (status 0) within 30 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise
        self.log.close()
        return self.process.returncode


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    assert s.stop() == 0, "server did not shut down cleanly on SIGTERM"


@pytest.fixture(scope="session")
def keyed_server():
    s = Server(["--api-key", "e2e-secret"])
    yield s
    assert s.stop() == 0
