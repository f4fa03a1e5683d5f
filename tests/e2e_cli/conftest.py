"""Fixtures for the agent-CLI suite: real clients from npm, run headless
against the real `cairn serve` on a real model, through a recording proxy.

Environment:
  CAIRN_BIN                 the cairn binary (default build/cairn)
  CAIRN_E2E_CLI_MODEL       GGUF to serve (default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M from
                            tools/fetch_models.py, fetched when missing)
  CAIRN_E2E_CLI_PROMPTS     short (default: short system prompts, fewer tools; fits CI) or
                            full (the clients exactly as shipped)
  CAIRN_E2E_CLI_DIR         where the CLIs are installed (default ~/.cache/cairn/e2e-cli)
  CAIRN_E2E_CLI_REPORT      where per-request summaries go (default build/e2e-cli-report)
  CAIRN_E2E_CLI_CAPTURES    when set, every session's recorded requests are copied there, one
                            folder per session (the input of bench/cli_replay.py)
  CAIRN_E2E_CLI_THREADS     server --threads (default 0 = all cores)
  CAIRN_E2E_CLI_TIMEOUT     seconds one client session may take (default 1800)

A client that cannot be installed (no npm, no registry) skips with the reason.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
BUGGY_MAIN = 'def add(a, b):\n    return a - b\n\n\nif __name__ == "__main__":\n    print(add(2, 3))\n'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def prompts() -> str:
    mode = os.environ.get("CAIRN_E2E_CLI_PROMPTS", "short")
    assert mode in ("short", "full"), mode
    return mode


@pytest.fixture(scope="session")
def cli_bin_dir() -> pathlib.Path:
    """node_modules/.bin of the pinned CLIs (tests/e2e_cli/package.json)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the agent CLIs come from the npm registry")
    prefix = pathlib.Path(os.environ.get("CAIRN_E2E_CLI_DIR", pathlib.Path.home() / ".cache/cairn/e2e-cli"))
    prefix.mkdir(parents=True, exist_ok=True)
    manifest = (ROOT / "tests/e2e_cli/package.json").read_text()
    stamp = prefix / "installed-package.json"
    bin_dir = prefix / "node_modules/.bin"
    if not (stamp.exists() and stamp.read_text() == manifest and bin_dir.is_dir()):
        (prefix / "package.json").write_text(manifest)
        print(f"\ne2e-cli: npm install of the agent CLIs into {prefix}", flush=True)
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=prefix,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.skip(f"npm install of the agent CLIs failed: {done.stderr.strip()[-400:]}")
        stamp.write_text(manifest)
    return bin_dir


@pytest.fixture(scope="session")
def model_path() -> str:
    env = os.environ.get("CAIRN_E2E_CLI_MODEL")
    if env:
        return env
    fetch = [sys.executable, str(ROOT / "tools/fetch_models.py")]
    found = subprocess.run(fetch + ["--path", MODEL_NAME], capture_output=True, text=True)
    path = found.stdout.strip()
    if found.returncode != 0 or not path or not os.path.exists(path):
        print(f"\ne2e-cli: fetching {MODEL_NAME} (tools/fetch_models.py)", flush=True)
        if subprocess.run(fetch + [MODEL_NAME], timeout=1800).returncode != 0:
            pytest.skip(f"{MODEL_NAME} could not be fetched (python3 tools/fetch_models.py {MODEL_NAME})")
        path = subprocess.run(fetch + ["--path", MODEL_NAME], capture_output=True, text=True).stdout.strip()
    return path


@pytest.fixture(scope="session")
def cairn_server(model_path, tmp_path_factory):
    """One `cairn serve` for the whole suite (clients run one after another)."""
    binary = os.environ.get("CAIRN_BIN", str(ROOT / "build/cairn"))
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([binary, "serve", "-m", model_path, "--port", str(port), "--ctx", "32768",
                             "--threads", os.environ.get("CAIRN_E2E_CLI_THREADS", "0"), "--no-disk-cache",
                             # A small model that loops must not spend the suite's time on 8192 tokens.
                             "--default-max-tokens", "2048"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            pytest.fail(f"cairn serve did not start; log:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.5)
    yield url, log_path
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def scratch_repo(tmp_path) -> pathlib.Path:
    """A git repository with one bug: add() subtracts."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text(BUGGY_MAIN)
    git = ["git", "-c", "user.email=e2e@cairn.invalid", "-c", "user.name=e2e"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "."], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "init"], cwd=repo, check=True)
    return repo


@pytest.fixture(scope="session")
def report_dir() -> pathlib.Path:
    out = pathlib.Path(os.environ.get("CAIRN_E2E_CLI_REPORT", ROOT / "build/e2e-cli-report"))
    out.mkdir(parents=True, exist_ok=True)
    return out
