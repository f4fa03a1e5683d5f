#!/usr/bin/env python3
"""Loopback recording proxy: forwards every request to a Cairn server and
writes each request body (and the response status) to a directory, one JSON
file per request, numbered in arrival order.

Use it to see exactly what an agent CLI sends (Claude Code, Codex, OpenCode,
qwen-code) and to build replay fixtures:

    tools/capture_proxy.py --listen 18090 --upstream http://127.0.0.1:8080 --out /tmp/capture
    ANTHROPIC_BASE_URL=http://127.0.0.1:18090 claude -p "..."

Files: NNNN.json = {"method", "path", "headers", "body" (parsed JSON or text),
"status", "response_head" (first 4 KiB of the response), "response_tail" (last
64 KiB: the final SSE events with usage and x_cairn)}. Streams are relayed
chunk by chunk, so the client sees the same timing as without the proxy.
Standard library only; binds 127.0.0.1.
"""
from __future__ import annotations

import argparse
import http.client
import http.server
import itertools
import json
import pathlib
import threading
import urllib.parse

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                "proxy-authorization", "proxy-authenticate", "host", "content-length"}


def make_handler(upstream: urllib.parse.ParseResult, out: pathlib.Path, counter, lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the record files are the log
            pass

        def _relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                number = next(counter)
            record = {"method": self.command, "path": self.path,
                      "headers": {k: v for k, v in self.headers.items()
                                  if k.lower() not in ("authorization", "x-api-key")}}
            try:
                record["body"] = json.loads(body) if body else None
            except ValueError:
                record["body"] = body.decode("utf-8", "replace")
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=3600)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            headers["Content-Length"] = str(len(body))
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
            record["status"] = response.status
            self.send_response(response.status)
            chunked = response.getheader("Transfer-Encoding", "").lower() == "chunked" or \
                response.getheader("Content-Length") is None
            for key, value in response.getheaders():
                if key.lower() not in _HOP_HEADERS:
                    self.send_header(key, value)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", response.getheader("Content-Length"))
            self.end_headers()
            head = bytearray()
            tail = bytearray()
            while True:
                piece = response.read1(65536) if chunked else response.read()
                if not piece:
                    break
                if len(head) < 4096:
                    head += piece[:4096 - len(head)]
                tail += piece
                del tail[:max(0, len(tail) - 65536)]
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                else:
                    self.wfile.write(piece)
                self.wfile.flush()
                if not chunked:
                    break
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
            conn.close()
            record["response_head"] = head.decode("utf-8", "replace")
            record["response_tail"] = tail.decode("utf-8", "replace")
            (out / f"{number:04d}.json").write_text(json.dumps(record, indent=1))

        do_GET = do_POST = do_DELETE = do_PUT = _relay

    return Handler


def serve(listen_port: int, upstream_url: str, out_dir: str) -> http.server.ThreadingHTTPServer:
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    handler = make_handler(urllib.parse.urlparse(upstream_url), out, itertools.count(1),
                           threading.Lock())
    server = http.server.ThreadingHTTPServer(("127.0.0.1", listen_port), handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    serve(args.listen, args.upstream, args.out).serve_forever()


if __name__ == "__main__":
    main()
