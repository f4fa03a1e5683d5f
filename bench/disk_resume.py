#!/usr/bin/env python3
"""Resume a long session from the disk tier after a restart (issue: the cache survives restarts).

1. `cairn serve --cache-dir D` (fresh D), one cold request with a long prompt (default 16k tokens).
2. SIGTERM (the server finishes its queued disk writes), then measure the rate of reading the pack
   files (after dropping the page cache when allowed, so the restart reads from the device too).
3. Start the server again on D and send the same conversation plus a short new user turn.

Prints cold TTFT, resumed TTFT, the bytes restored from disk and the bound
1.5 x (bytes / measured read rate) + suffix prefill, and the cold/resumed ratio, as a table.

  python3 bench/disk_resume.py --model qwen35-0.8b-q8_0.gguf [--tokens 16384] [--threads 2]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, cairn, model, cache_dir, threads):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile("w+", prefix="cairn-disk-resume-", suffix=".log", delete=False)
        self.proc = subprocess.Popen([cairn, "serve", "--model", model, "--port", str(self.port), "--threads",
                                      str(threads), "--cache-dir", cache_dir, "--spec", "baseline"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
            if self.proc.poll() is not None:
                break
        raise RuntimeError("server did not start; log: " + self.log.name)

    def chat(self, messages):
        body = json.dumps({"messages": messages, "max_tokens": 1, "temperature": 0}).encode()
        req = urllib.request.Request(self.base + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        start = time.perf_counter()
        with urllib.request.urlopen(req, timeout=3600) as r:
            out = json.loads(r.read())
        out["wall_seconds"] = time.perf_counter() - start
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=600)


def long_system_prompt(cairn, model, tokens):
    """Text of about `tokens` tokens: Python's own sources (what agents read), cut to size."""
    import glob
    text = ""
    for path in sorted(glob.glob("/usr/lib/python3*/*.py")):
        with open(path, errors="replace") as f:
            text += f.read()
        if len(text) > tokens * 6:
            break
    # About 4 characters per token on Python source.
    return text[: int(tokens * 4.0)]


def drop_page_cache():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def read_rate(cache_dir):
    total = 0
    start = time.perf_counter()
    for name in sorted(os.listdir(cache_dir)):
        if name.endswith(".cairnpack"):
            with open(os.path.join(cache_dir, name), "rb", buffering=0) as f:
                while chunk := f.read(16 << 20):
                    total += len(chunk)
    return total, total / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--cairn", default=os.path.join(ROOT, "build", "cairn"))
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    cache_dir = tempfile.mkdtemp(prefix="cairn-disk-resume-")
    system = long_system_prompt(args.cairn, args.model, args.tokens)
    turn1 = [{"role": "system", "content": system}, {"role": "user", "content": "Summarise the first function."}]
    turn2 = turn1 + [{"role": "assistant", "content": "It parses its arguments."},
                     {"role": "user", "content": "And what does the second one return?"}]
    try:
        server = Server(args.cairn, args.model, cache_dir, args.threads)
        cold = server.chat(turn2)
        server.stop()
        dropped = drop_page_cache()
        pack_bytes, rate = read_rate(cache_dir)
        dropped = drop_page_cache() and dropped
        server = Server(args.cairn, args.model, cache_dir, args.threads)
        resumed = server.chat(turn2 + [{"role": "assistant", "content": "A list."},
                                       {"role": "user", "content": "Thanks. Now the third?"}])
        server.stop()
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    xc, xr = cold["x_cairn"], resumed["x_cairn"]
    cache = xr["cache"]
    disk_bytes = cache.get("disk_bytes", 0)
    suffix_prefill = xr["prefill_seconds"]
    bound = 1.5 * disk_bytes / rate + suffix_prefill
    ttft_cold, ttft_resumed = xc["ttft_seconds"], xr["ttft_seconds"]
    rows = [
        ("prompt tokens (cold / resumed)", f"{cold['usage']['prompt_tokens']} / {resumed['usage']['prompt_tokens']}"),
        ("restored from disk (tokens)", cache.get("disk_tokens", 0)),
        ("restored bytes (MiB)", f"{disk_bytes / 2**20:.1f}"),
        ("pack files on disk (MiB)", f"{pack_bytes / 2**20:.1f}"),
        ("measured read rate (MiB/s)" + ("" if dropped else ", page cache not dropped"), f"{rate / 2**20:.0f}"),
        ("disk load time (s)", f"{cache.get('disk_seconds', 0):.3f}"),
        ("suffix prefill (s)", f"{suffix_prefill:.3f}"),
        ("TTFT cold (s)", f"{ttft_cold:.2f}"),
        ("TTFT resumed (s)", f"{ttft_resumed:.3f}"),
        ("bound 1.5 x bytes/rate + suffix prefill (s)", f"{bound:.3f}"),
        ("resumed within the bound", "yes" if ttft_resumed <= bound else "NO"),
        ("cold / resumed TTFT", f"{ttft_cold / ttft_resumed:.1f}x"),
    ]
    print("| measure | value |\n| --- | ---: |")
    for k, v in rows:
        print(f"| {k} | {v} |")
    return 0 if cache.get("disk_tokens", 0) > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
