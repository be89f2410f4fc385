"""Test helpers: a minimal HTTP client for the double, watch readers, the recordings.

The client is http.client on purpose: it shows exactly what goes over the wire
(status, headers, the chunked watch stream line by line) with no client library
interpreting it. Every call has a socket timeout, so no test can hang.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def recordings_dir() -> Path | None:
    """$KUBESCHED_LIVE_RECORDINGS, else the development machines' shared copy beside the repo."""
    env = os.environ.get("KUBESCHED_LIVE_RECORDINGS")
    path = Path(env) if env else REPO.parent / "shared" / "live"
    return path if (path / "wire").is_dir() else None


def recording(name: str) -> Obj:
    base = recordings_dir()
    if base is None:
        pytest.skip("API-server recordings not available (set KUBESCHED_LIVE_RECORDINGS)")
    data: Obj = json.loads((base / "wire" / f"{name}.json").read_text())
    return data


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: Any


class Wire:
    """JSON over HTTP/1.1 to one server, optionally with a bearer token."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token = token
        self.timeout = timeout

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def call(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Response:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(
                method, path, body=data, headers=self._headers(content_type if data else None)
            )
            resp = conn.getresponse()
            raw = resp.read()
            parsed = (
                json.loads(raw) if raw and "json" in (resp.getheader("Content-Type") or "") else raw
            )
            return Response(resp.status, dict(resp.getheaders()), parsed)
        finally:
            conn.close()

    def watch(self, path: str) -> WatchReader:
        return WatchReader(self, path)


class WatchReader:
    """Reads a watch stream on a thread; events arrive in `events` (a queue)."""

    def __init__(self, wire: Wire, path: str) -> None:
        self.conn = http.client.HTTPConnection(wire.host, wire.port, timeout=wire.timeout)
        self.conn.request("GET", path, headers=wire._headers(None))
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.events: queue.Queue[Obj] = queue.Queue()
        self.outcome: str | None = None  # "clean" (terminating chunk), "cut" or "timeout"
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        """Decode the chunked body by hand to tell a clean end from a cut connection."""
        fp = self.response.fp
        buffer = b""
        try:
            if fp is None or self.response.getheader("Transfer-Encoding") != "chunked":
                body = self.response.read()
                if body.strip():
                    for line in body.splitlines():
                        if line.strip():
                            self.events.put(json.loads(line))
                self.outcome = "clean"
                return
            while True:
                size_line = fp.readline()
                if not size_line:
                    self.outcome = "cut"
                    return
                size = int(size_line.strip() or b"0", 16)
                if size == 0:
                    self.outcome = "clean"
                    return
                chunk = fp.read(size + 2)
                if len(chunk) < size + 2:
                    self.outcome = "cut"
                    return
                buffer += chunk[:size]
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        self.events.put(json.loads(line))
        except TimeoutError:
            self.outcome = "timeout"
        except (ConnectionError, OSError, ValueError):
            self.outcome = "cut"
        finally:
            self.done.set()

    def next(self, timeout: float = 5.0) -> Obj:
        return self.events.get(timeout=timeout)

    def take(self, count: int, timeout: float = 5.0) -> list[Obj]:
        return [self.next(timeout) for _ in range(count)]

    def finish(self, timeout: float = 5.0) -> list[Obj]:
        """Wait for the stream to end; the events not yet taken."""
        assert self.done.wait(timeout), "watch stream did not end"
        out = []
        while not self.events.empty():
            out.append(self.events.get_nowait())
        self.conn.close()
        return out

    def close(self) -> None:
        """Hang up (shutting the socket down first unblocks the reading thread)."""
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.done.wait(5)
        self.conn.close()
