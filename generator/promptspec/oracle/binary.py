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
from dataclasses import dataclass
from pathlib import Path

from ..errors import PromptspecError

VERSION_RE = re.compile(r"^codex-cli (\d+)\.(\d+)\.(\d+)(?:[-+.][0-9A-Za-z.-]+)?\s*$")
OLDEST = (0, 125, 0)


class CodexError(PromptspecError):
    """A problem with the Codex binary or a run of it: one line, exit 2."""

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


def identify(path: str | Path, timeout: float = 30.0) -> CodexBinary:
    """Locate the binary and read `codex --version`; refuse anything else."""
    exe = locate(path)
    try:
        out = subprocess.run([str(exe), "--version"], capture_output=True, timeout=timeout,
                             env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "NO_COLOR": "1"}, stdin=subprocess.DEVNULL)
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
