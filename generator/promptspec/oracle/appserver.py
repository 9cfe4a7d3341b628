"""A small JSON-RPC client for `codex app-server` over stdio.

The app-server is the only way to choose a collaboration mode for a turn, and
one process serves many threads, each with its own configuration overrides,
which makes capturing hundreds of first requests take seconds instead of one
Codex start each.  Every wait is bounded; the process is ours and is ended by
its own pid when the client closes.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from typing import Any

from .binary import CodexBinary, CodexError, bounded_lines
from .scratch import Scratch

MAX_LINE = 32 * 1024 * 1024


class AppServer:
    def __init__(self, binary: CodexBinary, scratch: Scratch, args: list[str], timeout: float = 60.0):
        self.binary = binary
        self.timeout = timeout
        self._next = 0
        self._q: "queue.Queue[dict[str, Any] | None]" = queue.Queue()
        self._pending: list[dict[str, Any]] = []
        self._stderr: list[str] = []
        try:
            self.proc = subprocess.Popen([str(binary.path), *scratch.flags(), *args, "app-server"], cwd=scratch.cwd, env=scratch.env(binary),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise CodexError(f"cannot start `codex app-server`: {exc.strerror or exc}", release=binary.release) from None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in bounded_lines(self.proc.stdout, MAX_LINE):
            if line is None:  # longer than MAX_LINE: skipped without being held whole
                continue
            try:
                self._q.put(json.loads(line))
            except (UnicodeDecodeError, json.JSONDecodeError):
                self._q.put({"_unparseable": line[:200].decode("utf-8", "replace")})
        self._q.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in bounded_lines(self.proc.stderr, 64 * 1024):
            if line is None:
                continue
            self._stderr.append(line.decode("utf-8", "replace").rstrip())
            del self._stderr[:-20]

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None

    def _died(self) -> CodexError:
        err = next((ln for ln in reversed(self._stderr) if ln.strip() and "WARNING: proceeding" not in ln), "no message")
        code = self.proc.poll()
        if any("unrecognized subcommand" in ln for ln in self._stderr):
            return CodexError("this release has no `app-server` subcommand", release=self.binary.release,
                              hint="use a release from 0.125.0 on")
        return CodexError(f"`codex app-server` stopped (status {code}): {err[:300]}", release=self.binary.release,
                          hint="check the configuration values passed")

    def _next_message(self, deadline: float, what: str) -> dict[str, Any]:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CodexError(f"`codex app-server` did not answer {what} within {self.timeout:.0f} s",
                             release=self.binary.release, hint="a hung Codex; rerun, or report the release")
        try:
            msg = self._q.get(timeout=left)
        except queue.Empty:
            return self._next_message(deadline, what)
        if msg is None:
            self._q.put(None)
            raise self._died()
        if "_unparseable" in msg:
            raise CodexError(f"`codex app-server` printed a line that is not JSON: {msg['_unparseable'][:80]!r}",
                             release=self.binary.release, hint="report the release")
        if "method" in msg and "id" in msg:  # a request from the server (approvals...): decline
            self._send({"id": msg["id"], "error": {"code": -32601, "message": "not supported by promptspec"}})
            return self._next_message(deadline, what)
        return msg

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        rid = self._next
        self._send({"id": rid, "method": method, "params": params})
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._next_message(deadline, method)
            if msg.get("id") == rid:
                if "error" in msg:
                    text = msg["error"].get("message", "error") if isinstance(msg["error"], dict) else str(msg["error"])
                    refused = CodexError(f"`{method}` was refused: {' '.join(str(text).split())[:300]}",
                                         release=self.binary.release, hint="this release does not accept that value")
                    refused.refusal = True
                    raise refused
                return msg.get("result") or {}
            self._pending.append(msg)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"method": method, **({"params": params} if params is not None else {})})

    def wait_for(self, method: str, match: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            for i, msg in enumerate(self._pending):
                if msg.get("method") == method and _matches(msg.get("params") or {}, match or {}):
                    return self._pending.pop(i)
            self._pending = [m for m in self._pending if m.get("method") in (method,)][-100:]
            self._pending.append(self._next_message(deadline, method))

    def initialize(self) -> dict[str, Any]:
        result = self.request("initialize", {"clientInfo": {"name": "promptspec", "title": "promptspec", "version": "0"},
                                             "capabilities": {"experimentalApi": True}})
        self.notify("initialized")
        return result

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    # Killed but not yet reaped (a machine under heavy I/O load): its answers are
                    # all read, so closing goes on rather than failing an import or verify that is done.
                    pass

    def __enter__(self) -> "AppServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _matches(params: dict[str, Any], match: dict[str, Any]) -> bool:
    for key, value in match.items():
        got = params
        for part in key.split("."):
            got = got.get(part) if isinstance(got, dict) else None
        if got != value:
            return False
    return True
