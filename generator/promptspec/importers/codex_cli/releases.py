"""Codex releases as history sides: `promptspec history codex:0.125.0 codex:0.171.0`.

A `codex:RELEASE` side is installed from npm into the user cache (the
ordinary client: `npm install --prefix CACHE/codex/RELEASE @openai/codex@RELEASE`),
imported once per release and promptspec version (kept as a spec folder in
the cache, reused while its files are unchanged), and dated by the npm
registry's publish time (`npm view @openai/codex time --json`).  A
`codex:PATH` side is an install folder or binary already on disk.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from ...errors import UsageError
from ...util.fingerprint import code_fingerprint
from ...oracle import binary as _binary
from .importer import MARKER_FILE, import_cli

PACKAGE = "@openai/codex"
RELEASE = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")
NPM_TIMEOUT = 900.0


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise UsageError("a codex:RELEASE side needs npm to install the release (or give codex:PATH to an install)")
    return npm


def install(release: str, cache: Path) -> Path:
    """The install folder of `release` in the cache, installed from npm when missing."""
    folder = cache / "codex" / release
    if any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex")):
        return folder
    try:
        done = subprocess.run([_npm(), "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
                               f"{PACKAGE}@{release}"], capture_output=True, timeout=NPM_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise UsageError(f"codex:{release}: `npm install` did not finish within {NPM_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1][:200]
        raise UsageError(f"codex:{release}: npm cannot install {PACKAGE}@{release}: {last}")
    if not any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex")):
        # npm skips an optional platform package it cannot find without failing (0.142.1 and 0.153.1 have none).
        raise UsageError(f"codex:{release}: npm installed {PACKAGE}@{release} without a binary for this machine "
                         "(the release publishes no platform package for it); pick another release")
    return folder


@lru_cache(maxsize=1)
def publish_dates() -> dict[str, str]:
    """release -> publish date (YYYY-MM-DD) from the npm registry; empty when npm cannot say."""
    npm = shutil.which("npm")
    if npm is None:
        return {}
    try:
        done = subprocess.run([npm, "view", PACKAGE, "time", "--json"], capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
        data = json.loads(done.stdout.decode("utf-8")) if done.returncode == 0 else {}
    except (subprocess.TimeoutExpired, ValueError, UnicodeDecodeError):
        return {}
    return {k: v[:10] for k, v in data.items() if isinstance(v, str) and RELEASE.match(k)} if isinstance(data, dict) else {}


def codex_side(ref: str, cache: Path, timeout: float = 60.0, models: tuple[str, ...] = (),
               only: Mapping[str, Sequence[str]] | None = None) -> tuple[Path, str, str | None]:
    """(imported spec folder, release, publish date) for a `codex:` side
    (`models`, `only`: import only those models and axis values, as
    `import-codex --model` and `--only` do; each choice is kept apart)."""
    if RELEASE.match(ref):
        cli: Path = install(ref, cache)
    else:
        cli = Path(ref).expanduser()
    codex = _binary.identify(cli)
    chosen = "\0".join(models) + ("\0only=" + json.dumps({k: list(v) for k, v in only.items()}, sort_keys=True) if only else "")
    scope = hashlib.sha256(chosen.encode()).hexdigest()[:8] if chosen else "all"
    folder = cache / "codex-specs" / f"{codex.release}-{scope}-{code_fingerprint()[:16]}"
    if not (folder / MARKER_FILE).is_file():
        import_cli(cli, folder, force=True, timeout=timeout, models=models, only=only)
    return folder, codex.release, publish_dates().get(codex.release)
