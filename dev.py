#!/usr/bin/env python3
"""Set up a virtual environment in .venv and run promptspec's main jobs.

    python3 dev.py serve    # install, then `mkdocs serve` the site of the embedded spec
    python3 dev.py build    # install, then `mkdocs build --strict` into site/
    python3 dev.py test     # install with test extras, then run pytest

serve and build take `--engine properdocs` to use ProperDocs (the maintained
continuation of MkDocs 1.x) instead of MkDocs; it is installed with them.

Only the standard library is used here, so it runs on a fresh machine with
nothing but Python 3 (>= 3.10). Extra arguments are passed on to the tool.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _python() -> Path:
    return BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_venv(extras: str) -> Path:
    """Create .venv and install the project once; reinstall when pyproject changes."""
    if sys.version_info < (3, 10):
        sys.exit("promptspec needs Python 3.10 or newer")
    if not _python().exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    # Every install with extras includes the base one, so serve/build may use the test venv as it is.
    candidates = [stamp] if extras else sorted(VENV.glob(".installed-*"))
    if not any(s.is_file() and s.read_text() == digest for s in candidates):
        target = f"{ROOT}[{extras}]" if extras else str(ROOT)
        subprocess.check_call([str(_python()), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
        # The distribution was called "promptspec" before it became "promptspec-site".
        subprocess.call([str(_python()), "-m", "pip", "uninstall", "--quiet", "--yes", "promptspec"],
                        stderr=subprocess.DEVNULL)
        subprocess.check_call([str(_python()), "-m", "pip", "install", "--quiet", "-e", target])
        stamp.write_text(digest)
    return _python()


QUIET = {
    "NO_MKDOCS_2_WARNING": "1",  # Material's end-of-life banner under `mkdocs`; we pin mkdocs<2
    "DISABLE_MKDOCS_2_WARNING": "true",  # ProperDocs' notice, should a plugin switch it on
}


def tool_env() -> dict[str, str]:
    """The environment the site tools run in: without the maintenance banners,
    which say nothing about this project and bury its own messages."""
    return {**os.environ, **{k: v for k, v in QUIET.items() if k not in os.environ}}


def _dev_addr(args: list[str]) -> str:
    """The address `mkdocs serve` will bind: -a/--dev-addr, else its default."""
    for i, arg in enumerate(args):
        if arg in ("-a", "--dev-addr") and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--dev-addr="):
            return arg.split("=", 1)[1]
        if arg.startswith("-a") and len(arg) > 2:
            return arg[2:]
    return "127.0.0.1:8000"


def _in_use(addr: str) -> bool:
    host, _, port = addr.rpartition(":")
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.bind((host.strip("[]") or "127.0.0.1", int(port)))
    except OSError:
        return True
    except ValueError:
        return False  # not an address we understand: let MkDocs say so
    return False


def serve(py: Path, command: list[str]) -> int:
    """`mkdocs serve` (command: [engine, "serve", ...]), stopped with this
    script: SIGTERM, SIGINT and SIGHUP (an IDE's stop button, `kill`, tmux,
    Ctrl-C) are passed on to MkDocs, which runs in a session of its own so a
    terminal's Ctrl-C reaches it once."""
    addr = _dev_addr(command)
    if _in_use(addr):
        host, _, port = addr.rpartition(":")
        other = f"{host}:{int(port) + 1}" if port.isdigit() else "127.0.0.1:8001"
        print(f"dev.py: error: {addr} is in use (another server?); try: python3 dev.py serve -a {other}", file=sys.stderr)
        return 2
    asked: list[float] = []
    procs: list[subprocess.Popen] = []

    def forward(signum, frame):
        if procs and procs[0].poll() is None:
            procs[0].send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)
            asked.append(time.monotonic())

    # Handlers first: a signal this script ignores (SIGINT in a shell's
    # background job) would stay ignored in MkDocs too; one it handles is
    # reset to the default there.
    caught = [signal.SIGINT, signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    for sig in caught:
        signal.signal(sig, forward)
    proc = subprocess.Popen([str(py), "-m", *command], start_new_session=True)
    procs.append(proc)
    try:
        while True:
            try:
                code = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if asked and time.monotonic() - asked[0] > 10:  # asked to stop and still running
                    proc.kill()
    finally:
        if proc.poll() is None:  # an error of our own: never leave MkDocs behind
            proc.kill()
            proc.wait()
    return 0 if code in (-signal.SIGTERM, -signal.SIGINT) else code


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("serve", "build", "test"):
        print(__doc__.strip())
        return 2
    job, rest = argv[0], argv[1:]
    engine = "mkdocs"
    if rest[:1] == ["--engine"] and len(rest) > 1 and rest[1] in ("mkdocs", "properdocs"):
        engine, rest = rest[1], rest[2:]
    os.chdir(ROOT)
    os.environ.update(tool_env())
    if job == "test":
        py = ensure_venv("test")
        return subprocess.call([str(py), "-m", "pytest", *rest])
    py = ensure_venv("properdocs" if engine == "properdocs" else "")
    if job == "serve":
        return serve(py, [engine, "serve", "-f", "mkdocs.yml", *rest])
    return subprocess.call([str(py), "-m", engine, "build", "--strict", "-f", "mkdocs.yml", *rest])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
