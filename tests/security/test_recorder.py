"""R13 (second red-team pass): the loopback recorder serves only the Codex it
was started for.  Any local user can see its port; a request without the
per-run secret in the URL is refused and never counted, bodies need a valid
Content-Length, silent connections are dropped, broken ones print nothing."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from promptspec.oracle import recorder as rec_mod
from promptspec.oracle.recorder import Recorder


def _send(url: str, path: str, body: bytes = b"{}", length: int | None = None) -> socket.socket:
    port = urlsplit(url).port
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (path.encode(), len(body) if length is None else length) + body)
    return s


def _status(s: socket.socket) -> str:
    return s.recv(12).decode(errors="replace").strip()


@pytest.fixture
def rec():
    r = Recorder(max_requests=3, timeout=60)
    r.start()
    yield r
    r.stop()


def test_foreign_clients_cannot_use_up_the_recorder(rec: Recorder) -> None:
    for _ in range(10):
        assert _status(_send(rec.url, "/v1/responses")).endswith("404")
    own = urlsplit(rec.url).path + "/responses"
    assert own != "/v1/responses" and len(own) > 20  # the secret is in the URL Codex is given
    body = json.dumps({"prompt_cache_key": "the-real-thread"}).encode()
    assert _status(_send(rec.url, own, body)).endswith("200")
    assert [r.path for r in rec.requests] == ["/v1/responses"]
    assert rec.first_with("prompt_cache_key", "the-real-thread", 1) is not None


@pytest.mark.parametrize("length", [-1, rec_mod.MAX_BODY_BYTES + 1])
def test_a_bad_content_length_is_refused_without_reading_to_the_end(rec: Recorder, length: int) -> None:
    s = _send(rec.url, urlsplit(rec.url).path + "/responses", b"x" * 4096, length=length)
    s.shutdown(socket.SHUT_WR)  # the stream ends; the old code buffered everything up to here (or past its cap)
    assert _status(s).endswith(("411", "404"))
    assert rec.requests == []


def test_silent_connections_are_dropped_and_nothing_is_printed(monkeypatch, capfd) -> None:
    monkeypatch.setattr(rec_mod, "SOCKET_TIMEOUT", 1.0)
    r = Recorder(max_requests=3, timeout=60)
    r.start()
    try:
        s = _send(r.url, urlsplit(r.url).path + "/responses", b"", length=100)  # never sends its body
        s.settimeout(10)
        t0 = time.monotonic()
        try:
            got = s.recv(100)
        except ConnectionResetError:
            got = b""
        assert got == b"" and time.monotonic() - t0 < 8  # the server closed it (the old code held it forever)
        broken = socket.create_connection(("127.0.0.1", urlsplit(r.url).port))
        broken.sendall(b"POST " + urlsplit(r.url).path.encode() + b"/responses HTTP/1.1\r\nContent-Length: 10\r\n\r\nab")
        broken.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        broken.close()  # a reset mid-body
        time.sleep(1.5)
    finally:
        r.stop()
    assert "Traceback" not in capfd.readouterr().err
