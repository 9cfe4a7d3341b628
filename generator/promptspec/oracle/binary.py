"""Finding the native Codex binary in an npm install, and asking its release.

`--cli PATH` may name the npm prefix, the package folder, `node_modules/.bin/codex`
or the native binary itself.  We always run the native binary (the npm launcher
only adds its `path/` folder to PATH, which the scratch runner does too), so no
Node start-up per run and no launcher environment leaking into the prompt.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import PromptspecError

VERSION_RE = re.compile(r"^codex-cli (\d+)\.(\d+)\.(\d+)(?:[-+.][0-9A-Za-z.-]+)?\s*$")
OLDEST = (0, 125, 0)


class CodexError(PromptspecError):
    """A problem with the Codex binary or a run of it: one line, exit 2."""

    refusal = False
    """True when the release answered the request with an error (appserver.py): its answer, not a failure."""

    def __init__(self, message: str, release: str | None = None, hint: str | None = None):
        self.release = release
        text = f"codex {release}: {message}" if release else message
        if hint:
            text += f" ({hint})"
        super().__init__(text)

    def oneline(self) -> str:
        return " ".join(str(self).split())


@dataclass(frozen=True)
class CodexBinary:
    path: Path  # the native executable
    release: str  # "0.125.0"
    extra_path: tuple[str, ...] = ()  # folders the npm launcher puts first on PATH (bundled rg)

    @property
    def version(self) -> tuple[int, int, int]:
        return tuple(int(x) for x in self.release.split(".")[:3])  # type: ignore[return-value]


NATIVE = ("vendor/*/codex/codex", "vendor/*/bin/codex")
"""Where releases put the native binary inside a package (older: codex/codex; newer: bin/codex)."""


def _native_candidates(root: Path) -> list[Path]:
    found = []
    for folder in ("node_modules/@openai/codex-*/", "node_modules/@openai/codex/", "", "../codex-*/", "*/"):
        for native in NATIVE:
            found.extend(sorted(root.glob(folder + native)))
    return [p for p in found if p.is_file()]


def locate(path: str | Path) -> Path:
    """The native executable for PATH, or a one-line error saying what to pass."""
    p = Path(path).expanduser()
    if not p.exists():
        raise CodexError(f"{p}: no such file or folder",
                         hint="pass the folder of `npm install --prefix DIR @openai/codex@VERSION` or the codex binary")
    if p.is_dir():
        candidates = _native_candidates(p)
        if not candidates:
            raise CodexError(f"{p}: no Codex binary found in this folder",
                             hint="pass the folder of `npm install --prefix DIR @openai/codex@VERSION` or the codex binary")
        return candidates[0].resolve()
    real = p.resolve()
    if real.name == "codex.js":  # node_modules/.bin/codex -> ../@openai/codex/bin/codex.js
        candidates = _native_candidates(real.parent.parent.parent.parent) + _native_candidates(real.parent.parent)
        if not candidates:
            raise CodexError(f"{p}: the npm launcher's native binary is missing",
                             hint="reinstall with `npm install --prefix DIR @openai/codex@VERSION`")
        return candidates[0].resolve()
    mode = real.stat().st_mode
    if not stat.S_ISREG(mode) or not os.access(real, os.X_OK):
        raise CodexError(f"{p}: not an executable file", hint="pass the codex binary or its npm install folder")
    return real


MAX_OUTPUT = 64 * 1024 * 1024
"""Most bytes a Codex command may print on stdout or stderr (`debug models` prints under 1 MB)."""


def bounded_lines(stream, limit: int) -> Iterator[bytes | None]:
    """The lines of a binary stream, each read with a bound: a line longer than
    `limit` is skipped (None) without ever being held whole."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):  # the rest of the long line, dropped chunk by chunk
            line = stream.readline(limit)
        yield None


def _drain(stream, into: bytearray, limit: int, over: threading.Event) -> None:
    while True:
        chunk = stream.read1(1 << 16)
        if not chunk:
            return
        if len(into) + len(chunk) > limit:
            over.set()
            return
        into += chunk


def run_bounded(argv: list[str], timeout: float, *, cwd: str | Path | None = None,
                env: dict[str, str] | None = None) -> tuple[int, bytes, bytes, bool]:
    """(status, stdout, stderr, over): like subprocess.run with capture_output,
    but the child is killed once either stream passes MAX_OUTPUT (a broken or
    hostile binary can print gigabytes; `over` says it did)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err, over = bytearray(), bytearray(), threading.Event()
    readers = [threading.Thread(target=_drain, args=(s, b, MAX_OUTPUT, over), daemon=True)
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for t in readers:
        t.start()
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and not over.is_set():
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(argv, timeout)
            over.wait(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for t in readers:
            t.join(timeout=5)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    return proc.returncode, bytes(out), bytes(err), over.is_set()


def identify(path: str | Path, timeout: float = 30.0) -> CodexBinary:
    """Locate the binary and read `codex --version`; refuse anything else."""
    exe = locate(path)
    try:
        code, stdout, stderr, _ = run_bounded([str(exe), "--version"], timeout,
                                              env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "NO_COLOR": "1"})
        out = subprocess.CompletedProcess([], code, stdout, stderr)
    except subprocess.TimeoutExpired:
        raise CodexError(f"{exe}: `--version` did not answer within {timeout:.0f} s",
                         hint="is this a Codex CLI binary?") from None
    except OSError as exc:
        raise CodexError(f"{exe}: cannot run it: {exc.strerror or exc}", hint="pass a Codex CLI binary for this machine") from None
    text = out.stdout.decode("utf-8", "replace").strip()
    m = VERSION_RE.match(text)
    if out.returncode != 0 or not m:
        shown = (text or out.stderr.decode("utf-8", "replace").strip())[:80]
        raise CodexError(f"{exe}: not a Codex CLI (`--version` printed {shown!r})",
                         hint="pass the binary of an `@openai/codex` npm install")
    release = ".".join(m.groups())
    if tuple(int(x) for x in m.groups()) < OLDEST:
        raise CodexError(f"releases before {'.'.join(map(str, OLDEST))} are not supported", release=release,
                         hint="install 0.125.0 or newer")
    extra = tuple(str(d) for d in [exe.parent.parent / "path", exe.parent.parent / "codex-path"] if d.is_dir())
    return CodexBinary(exe, release, extra)
