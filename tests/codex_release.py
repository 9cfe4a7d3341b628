"""A released Codex CLI for the fidelity tests, installed from npm at test time.

Where it comes from, in order: `$PROMPTSPEC_CODEX` (an install folder or the
binary), `<cache>/<release>` where the cache is `$PROMPTSPEC_CODEX_CACHE`
(a shared cache of `npm install --prefix` folders) or else `.ci/cache/codex`
in the repo (git-ignored, the folder `.ci/run` fills with every release
codex_releases.txt lists); a release not there is installed there with npm
on first use.  When that cannot be done (no npm,
offline, a registry failure, a package layout without the binary) the test
is missing a requirement (required.py): a skip naming what is missing, and
a failure in CI.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

from required import missing

PINNED = "0.125.0"
IMPORTED_MODEL = "gpt-5.4"
"""The one model conftest's `codex_import` imports (a whole catalog takes minutes)."""
PINNED_BODY_KEYS = (
    "model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls",
    "reasoning", "store", "stream", "include", "prompt_cache_key", "text", "client_metadata",
)
"""The top-level keys of the request body Codex 0.125.0 sends, in order (the
harvest in ../shared/research/codex-cli-oracle.md §3); checked against a live
capture by tests/verify/test_verify.py."""
REPO = Path(__file__).resolve().parent.parent
RELEASES_FILE = Path(__file__).resolve().parent / "codex_releases.txt"


def releases() -> tuple[str, ...]:
    """Every release the suite runs (codex_releases.txt): what `.ci/run` installs
    before the tests start, so that no download happens inside the test run."""
    lines = RELEASES_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def has_binary(folder: Path) -> bool:
    return any(folder.glob("node_modules/@openai/codex-*/vendor/*/*/codex"))


_has_binary = has_binary  # the name other tests imported


def cache_root() -> Path:
    """Where releases are looked for and installed: one `<release>` folder each."""
    given = os.environ.get("PROMPTSPEC_CODEX_CACHE")
    return Path(given) if given else REPO / ".ci" / "cache" / "codex"


def codex_install(release: str = PINNED) -> Path:
    """The `npm install --prefix` folder of Codex `release`, installed if need be."""
    if release not in releases():
        raise AssertionError(f"Codex {release} is not in {RELEASES_FILE.name}: add it there, so that .ci/run installs it "
                             "before the tests start")
    given = os.environ.get("PROMPTSPEC_CODEX")
    if given and release == PINNED:
        return Path(given)
    folder = cache_root() / release
    if has_binary(folder):
        return folder
    with _installing(folder):
        if has_binary(folder):  # another test worker installed it while this one waited
            return folder
        return _npm_install(release, folder)


def later_part() -> dict[str, list[str]]:
    """The smallest part of the matrix the later turns may be learned in: every
    value the standard threads start from or switch to, on the axes where that
    is not all (importers/codex_cli/later_turns.values_reached; 54 of a model's
    144 configurations), whose later turns are the whole matrix's (test_codex_later_turns.py)."""
    from promptspec.importers.codex_cli.later_turns import values_reached
    from promptspec.oracle.capture import ONLY_AXES

    return {axis: values for axis, values in values_reached().items() if len(values) < len(ONLY_AXES[axis])}


def import_later_turns(release: str, models: tuple[str, ...], folder: Path, whole: bool = False) -> tuple[Path, Path, dict]:
    """(install folder, spec folder, import stats) of `models` of Codex `release`
    imported with their later turns into `folder`/spec (installed if need be),
    in later_part() unless `whole`: the module fixtures of the later-turn tests."""
    from promptspec.importers.codex_cli import import_cli

    cli = codex_install(release)
    spec_dir, stats = import_cli(cli, folder / "spec", models=models, later_turns=True, only=None if whole else later_part())
    return cli, spec_dir, stats


@contextlib.contextmanager
def _installing(folder: Path) -> Iterator[None]:
    """One `npm install` per release folder at a time: the suite runs in several
    worker processes (pytest-xdist), and two npm runs into one prefix break it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _npm_install(release: str, folder: Path) -> Path:
    wanted = f"Codex {release} (not in {folder}; set PROMPTSPEC_CODEX_CACHE or let npm install it)"
    npm = shutil.which("npm")
    if npm is None:
        missing(f"{wanted}, and npm is not on PATH")
    try:
        done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error",
                               f"@openai/codex@{release}"], capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        missing(f"{wanted}, and `npm install` did not finish within 600 s")
    if done.returncode != 0 or not has_binary(folder):
        last = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        missing(f"{wanted}; `npm install @openai/codex@{release}` "
                f"{'failed' if done.returncode else 'left no codex binary under node_modules/@openai/codex-*/vendor'}: {last[:200]}")
    return folder
