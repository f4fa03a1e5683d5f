"""The prefix cache's disk tier through the real `cairn serve`.

A restarted server (SIGTERM, then kill -9 in the middle of writing) serves a
resumed conversation from disk with the same tokens as the first server; a
second server on the same directory runs without the disk tier and says why;
GET /cache shows both tiers and DELETE /cache[/entries/{id}] clears them.
"""
import json
import os
import shutil
import signal
import tempfile
import time
import urllib.request

import pytest

from conftest import Answer, Server, http_get

SYSTEM = ("You are a coding agent working in /srv/project. Tools: read_file(path), write_file(path, text), "
          "run(command). Always read a file before editing it, keep edits minimal, and explain each change. ") * 3


def chat(server, messages, max_tokens=12):
    r = server.client().chat.completions.create(model="m", messages=messages, max_tokens=max_tokens, temperature=0,
                                                logprobs=True, top_logprobs=2,
                                                extra_body={"ignore_eos": True, "return_token_ids": True})
    return Answer(r)


def delete(url):
    request = urllib.request.Request(url, method="DELETE")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def messages(turn):
    out = [{"role": "system", "content": SYSTEM}]
    for t in range(turn):
        out.append({"role": "user", "content": f"Step {t}: open src/module_{t}.py and fix the bug in add()."})
        if t + 1 < turn:
            out.append({"role": "assistant", "content": f"Done with module_{t}: add() now returns a + b."})
    return out


@pytest.fixture
def cache_dir():
    d = tempfile.mkdtemp(prefix="cairn-e2e-kv-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("model", ["dense", "hybrid"])
def test_restart_serves_from_disk_with_identical_tokens(models, cache_dir, model):
    first = Server(f"disk1_{model}", models[model], ["--cache-dir", cache_dir])
    try:
        cold = chat(first, messages(2))
        ram = chat(first, messages(2))
        assert ram.cached > 0, ram.cache
        assert ram.token_ids == cold.token_ids
    finally:
        assert first.stop() == 0   # SIGTERM: queued writes finish before exit

    second = Server(f"disk2_{model}", models[model], ["--cache-dir", cache_dir])
    try:
        listing = second.cache_listing()
        assert listing["disk"]["enabled"] and listing["disk"]["block_records"] > 0, listing["disk"]
        assert listing["entries"] == []
        resumed = chat(second, messages(2))
        assert resumed.cache.get("disk_tokens", 0) > 0, resumed.cache
        assert resumed.cached == resumed.cache["disk_tokens"]
        assert resumed.token_ids == cold.token_ids
        assert [lp[:2] for lp in resumed.logprobs] == [lp[:2] for lp in cold.logprobs]
        assert "cairn_disk_cache_hits_total 1" in second.metrics()

        # One id space for both tiers: delete this conversation's entry by id.
        time.sleep(0.5)  # write-behind of the request above
        listing = second.cache_listing()
        ids = {e["id"] for e in listing["entries"]}
        assert ids and ids <= {e["id"] for e in listing["disk"]["entries"]}, listing
        status, body = delete(second.base + "/cache/entries/" + sorted(ids)[0])
        assert status == 200, body
        status, body = delete(second.base + "/cache/entries/" + sorted(ids)[0])
        assert status == 404 and body["error"]["message"].startswith("no cache entry"), body
        status, body = delete(second.base + "/cache/entries/not-an-id")
        assert status == 400, body
        status, body = delete(second.base + "/v1/cache")
        assert status == 200 and body == {"cleared": True}
        listing = second.cache_listing()
        assert listing["disk"]["bytes"] == 0 and listing["entries"] == [], listing["disk"]
        again = chat(second, messages(2))
        assert again.cached == 0 and again.token_ids == cold.token_ids
    finally:
        assert second.stop() == 0


def test_kill_9_during_writes_then_restart(models, cache_dir):
    first = Server("disk_kill", models["hybrid"], ["--cache-dir", cache_dir])
    answers = {}
    for turn in (1, 2, 3):
        answers[turn] = chat(first, messages(turn))
    first.process.send_signal(signal.SIGKILL)   # writes may be in flight
    first.process.wait()
    first.log.close()

    second = Server("disk_kill2", models["hybrid"], ["--cache-dir", cache_dir])
    try:
        assert second.cache_listing()["disk"]["enabled"]
        for turn in (3, 2, 1):
            a = chat(second, messages(turn))
            assert a.token_ids == answers[turn].token_ids, (turn, a.cache)
        # Something written before the kill was served from disk.
        assert second.cache_listing()["disk"]["hits"] >= 1
    finally:
        assert second.stop() == 0


def test_two_servers_on_one_directory(models, cache_dir):
    first = Server("disk_lock1", models["dense"], ["--cache-dir", cache_dir])
    try:
        second = Server("disk_lock2", models["dense"], ["--cache-dir", cache_dir])
        try:
            disk = second.cache_listing()["disk"]
            assert not disk["enabled"]
            assert "another Cairn server (pid %d)" % first.process.pid in disk["status"], disk
            a = chat(second, messages(1))   # serves from RAM only, normally
            assert a.cached == 0
            assert chat(second, messages(1)).cached > 0
        finally:
            assert second.stop() == 0
        assert first.cache_listing()["disk"]["enabled"]
    finally:
        assert first.stop() == 0


def test_cache_cli_lists_and_clears(models, cache_dir):
    import subprocess
    from conftest import cairn_bin
    server = Server("disk_cli", models["dense"], ["--cache-dir", cache_dir])
    try:
        chat(server, messages(1))
        time.sleep(0.5)
        ls = subprocess.run([cairn_bin(), "cache", "ls", "--dir", cache_dir], capture_output=True, text=True, check=True)
        assert "in use by server pid %d" % server.process.pid in ls.stdout, ls.stdout
        assert ".cairnpack" in ls.stdout
        refused = subprocess.run([cairn_bin(), "cache", "clear", "--dir", cache_dir], capture_output=True, text=True)
        assert refused.returncode != 0 and "DELETE /cache" in refused.stderr, refused
    finally:
        assert server.stop() == 0
    cleared = subprocess.run([cairn_bin(), "cache", "clear", "--dir", cache_dir], capture_output=True, text=True,
                             check=True)
    assert "removed 1 pack files" in cleared.stdout, cleared.stdout
    ls = subprocess.run([cairn_bin(), "cache", "ls", "--dir", cache_dir], capture_output=True, text=True, check=True)
    assert "no pack files" in ls.stdout
