"""A loopback stand-in for the Responses API that records what Codex sends.

Codex is pointed at it through a custom model provider, so the first request
of a turn arrives here byte for byte instead of leaving the machine.  It binds
127.0.0.1 only, on an ephemeral port, answers each `POST .../responses` with
the smallest SSE stream Codex accepts as a finished turn, and stops by itself
after a number of requests or a deadline, so a stuck client never leaves a
server behind.

Other users of the machine can see the port, so the recorder serves only the
Codex it was started for: the base URL holds a per-run secret path, and a
request without it is answered 404 and never recorded or counted.  Bodies
need a valid Content-Length of at most 64 MB, a silent connection is dropped
after SOCKET_TIMEOUT, at most MAX_CONNECTIONS are served at once, and a broken
connection prints nothing.  (The secret is in Codex's command line, which
other local users can read where /proc is not mounted with `hidepid`: it stops
anyone using the port blindly, not a user who watches the process list.)
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_CONNECTIONS = 32
"""Connections served at once; more are closed at accept (Codex opens a few)."""
SOCKET_TIMEOUT = 30.0
"""Seconds a connection may stay silent (a client that never sends its body is dropped)."""
MAX_DISCARD = 1024 * 1024 * 1024
DISCARD_SECONDS = 60.0
"""What a refused request may send before it is cut off (read and dropped, never held)."""


class _Server(ThreadingHTTPServer):
    """Bounded and quiet: at most MAX_CONNECTIONS at once, and a broken
    connection is dropped without a traceback on the importer's stderr."""

    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass

REPLY_TEXT = "ok"
"""The assistant reply every turn gets; it is a volatile part of any later
request (documented in docs/verify.md)."""


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode() for e in events
    )


def _reply(n: int, total_tokens: int = 2, items: list[dict[str, Any]] | None = None) -> bytes:
    rid, mid = f"resp_{n:06d}", f"msg_{n:06d}"
    item = {"type": "message", "role": "assistant", "id": mid, "status": "completed",
            "content": [{"type": "output_text", "text": REPLY_TEXT, "annotations": []}]}
    usage = {"input_tokens": max(total_tokens - 1, 0), "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": total_tokens}
    if items:  # a scripted answer (a tool call): each item added and done, then completed
        return _sse([{"type": "response.created", "response": {"id": rid}},
                     *[{"type": f"response.output_item.{stage}", "output_index": i, "item": it}
                       for i, it in enumerate(items) for stage in ("added", "done")],
                     {"type": "response.completed", "response": {"id": rid, "usage": usage}}])
    return _sse([
        {"type": "response.created", "response": {"id": rid}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": mid, "delta": REPLY_TEXT},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": rid, "usage": usage}},
    ])


@dataclass
class Captured:
    method: str
    path: str
    body: Any
    raw: bytes = field(repr=False, default=b"")


class RecorderError(Exception):
    pass


class Recorder:
    """`with Recorder(max_requests=N, timeout=S) as rec: ... rec.url ... rec.wait(k)`."""

    def __init__(self, max_requests: int = 1000, timeout: float = 600.0, port: int = 0):
        self.max_requests = max_requests
        self.timeout = timeout
        self.port = port
        self.requests: list[Captured] = []
        self.usage_total = 2
        """The `usage.total_tokens` each answer reports (a thread capture raises it to trigger auto-compaction)."""
        self.answer: Any = None
        """None, or a function of a request's body giving the output items to answer it with
        (None from it: the plain reply), e.g. a tool call that makes Codex send a second request."""
        self._cond = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._deadline = 0.0
        self._stopped = False
        self._prefix = f"/{secrets.token_urlsafe(18)}/"  # per run: other local users cannot guess it

    # -- lifecycle -----------------------------------------------------------
    def __enter__(self) -> "Recorder":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = SOCKET_TIMEOUT

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def _length(self) -> int | None:
                text = (self.headers.get("content-length") or "").strip()
                length = int(text) if text.isdigit() and len(text) < 20 else None
                return length if length is not None and length <= MAX_BODY_BYTES else None

            def _refuse(self, status: int, length: int | None) -> None:
                """Answer and close, reading what the client sends into nothing
                (never into memory): its stated length, else until it stops, at
                most MAX_DISCARD bytes and DISCARD_SECONDS."""
                self.close_connection = True
                left, end = (length if length is not None else MAX_DISCARD), time.monotonic() + DISCARD_SECONDS
                try:
                    while left > 0 and time.monotonic() < end:
                        chunk = self.rfile.read1(min(left, 1 << 16))
                        if not chunk:
                            break
                        left -= len(chunk)
                    self._empty(status)
                except OSError:
                    pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                # Only the Codex we started knows the per-run secret in the URL:
                # another local client is answered 404 and counts for nothing.
                length = self._length()
                if not self.path.startswith(recorder._prefix) or length is None:
                    self._refuse(404 if not self.path.startswith(recorder._prefix) else 411, length)
                    return
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw.decode("utf-8")) if raw else None
                except (UnicodeDecodeError, json.JSONDecodeError):
                    body = None
                n = recorder._record(Captured("POST", self.path[len(recorder._prefix) - 1:], body, raw))
                if self.path.rstrip("/").endswith("/responses") and n is not None:
                    data = _reply(n, recorder.usage_total, recorder.answer(body) if recorder.answer else None)
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._empty(404 if n is not None else 503)

            def do_GET(self) -> None:  # noqa: N802
                self._empty(404)

            def _empty(self, status: int) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        try:
            self._server = _Server(("127.0.0.1", self.port), Handler)
        except OSError as exc:
            raise RecorderError(f"cannot listen on 127.0.0.1:{self.port}: {exc.strerror or exc}") from None
        self._deadline = time.monotonic() + self.timeout
        self._thread = threading.Thread(target=self._serve, name="codex-recorder", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        assert self._server is not None
        self._server.timeout = 0.2
        while not self._stopped and time.monotonic() < self._deadline:
            self._server.handle_request()
        self._stopped = True
        with self._cond:
            self._cond.notify_all()

    def stop(self) -> None:
        self._stopped = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._server is not None:
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._prefix}v1"

    # -- data ----------------------------------------------------------------
    def _record(self, captured: Captured) -> int | None:
        with self._cond:
            if len(self.requests) >= self.max_requests:
                self._stopped = True
                return None
            self.requests.append(captured)
            self._cond.notify_all()
            return len(self.requests)

    def first_with(self, key: str, value: str, timeout: float) -> Captured | None:
        """The first request whose JSON body has `key` == `value`, waiting up to `timeout` seconds."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                for r in self.requests:
                    if isinstance(r.body, dict) and r.body.get(key) == value:
                        return r
                left = end - time.monotonic()
                if left <= 0 or self._stopped:
                    return None
                self._cond.wait(min(left, 0.5))

    def wait(self, count: int, timeout: float) -> bool:
        """True once `count` requests arrived; False after `timeout` seconds."""
        end = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < count:
                left = end - time.monotonic()
                if left <= 0 or self._stopped:
                    return len(self.requests) >= count
                self._cond.wait(min(left, 0.5))
            return True


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start_recorder(release: str, max_requests: int, timeout: float, port: int = 0) -> Recorder:
    """A started recorder for one Codex run, or the one line a user reads when it cannot start."""
    from .binary import CodexError

    rec = Recorder(max_requests=max_requests, timeout=timeout, port=port)
    try:
        rec.start()
    except RecorderError as exc:
        raise CodexError(f"the loopback recorder cannot start: {exc}", release=release,
                         hint="free that port or pass --port 0 for any free one") from None
    return rec
