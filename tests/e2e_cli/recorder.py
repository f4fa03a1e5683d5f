"""The recording proxy (tools/capture_proxy.py) on a thread, one per client session."""
from __future__ import annotations

import json
import pathlib
import socket
import sys
import threading

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tools"))
import capture_proxy  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """The recording proxy (tools/capture_proxy.py) on a thread; one folder per client."""

    def __init__(self, upstream: str, out: pathlib.Path):
        self.port = _free_port()
        self.out = out
        self.server = capture_proxy.serve(self.port, upstream, str(out))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self) -> list[dict]:
        return [json.loads(p.read_text()) for p in sorted(self.out.glob("*.json"))]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
