"""A released Codex CLI for the fidelity tests, installed from npm at test time.

Where it comes from, in order: `$PROMPTSPEC_CODEX` (an install folder or the
binary), `$PROMPTSPEC_CODEX_CACHE/<release>` (a shared cache of
`npm install --prefix` folders), else `.ci/cache/codex-<release>` in the repo
(git-ignored), installed there with npm on first use.  When none is there and
npm cannot install it (offline, no npm), the tests that need it skip and say why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

PINNED = "0.125.0"
REPO = Path(__file__).resolve().parent.parent


def _has_binary(folder: Path) -> bool:
    return any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex"))


def codex_install(release: str = PINNED) -> Path:
    given = os.environ.get("PROMPTSPEC_CODEX")
    if given:
        return Path(given)
    cache = os.environ.get("PROMPTSPEC_CODEX_CACHE")
    if cache and _has_binary(Path(cache) / release):
        return Path(cache) / release
    folder = REPO / ".ci" / "cache" / f"codex-{release}"
    if _has_binary(folder):
        return folder
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"needs Codex {release} from npm, and npm is not installed (or set PROMPTSPEC_CODEX_CACHE)")
    try:
        done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
                               f"@openai/codex@{release}"], capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"needs Codex {release} from npm, and `npm install` did not finish within 600 s")
    if done.returncode != 0 or not _has_binary(folder):
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"needs Codex {release} from npm, which is unreachable here: {last[:200]}")
    return folder
