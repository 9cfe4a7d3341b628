"""`python3 dev.py serve`: stopping it stops MkDocs, and a busy port is one line.

Runs the real script with the worktree's .venv (the one the tests run in),
on a free loopback port."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from _helpers import REPO, free_port, subprocess_env
from required import needs
from promptspec.oracle.recorder import port_free

def _installed() -> bool:
    """dev.py's own rule: any install stamp of the current pyproject.toml (the
    test install includes the base one), so serve starts without installing."""
    import hashlib

    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    return any(s.read_text() == digest for s in (REPO / ".venv").glob(".installed-*") if s.is_file())


pytestmark = needs(
    _installed(),
    "dev.py serve would first install into .venv (run `python3 dev.py test` or `build` once)",
)


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killing_dev_serve_leaves_no_server_behind(tmp_path, sig):
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "dev.py"), "serve", "-a", f"127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, env=subprocess_env(), cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 120
        while not _answers(port):
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "mkdocs serve did not answer"
            time.sleep(0.5)
        proc.send_signal(sig)  # what `kill PID`, an IDE's stop button or Ctrl-C sends
        assert proc.wait(timeout=30) == 0
        deadline = time.monotonic() + 15
        while not port_free(port):  # the server behind it is gone too
            assert time.monotonic() < deadline, "mkdocs serve still holds the port after dev.py exited"
            time.sleep(0.2)
        assert not _answers(port)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()


def test_a_port_in_use_is_one_line_suggesting_another(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, str(REPO / "dev.py"), "serve", "-a", f"127.0.0.1:{port}"],
            capture_output=True, text=True, env=subprocess_env(), cwd=REPO, timeout=120,
        )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0] == (
        f"dev.py: error: 127.0.0.1:{port} is in use (another server?); try: python3 dev.py serve -a 127.0.0.1:{port + 1}"
    )
    assert "Traceback" not in proc.stderr
