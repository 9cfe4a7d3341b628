"""A real `promptspec build --out` killed midway leaves the previous site intact."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _big_spec(tmp_path: Path) -> Path:
    """The embedded spec with one more axis of 4 values, so that writing takes
    a while: its pages are staged for 1.0 s here, after 6.4 s before the first
    (10 values: 1.3 s after 18.7 s; measured with a cold token cache)."""
    spec = tmp_path / "spec"
    shutil.copytree(ROOT / "templates", spec)
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "  sandbox_mode: [workspace-write, read-only]\n",
        "  sandbox_mode: [workspace-write, read-only]\n  team: [t0, t1, t2, t3]\n",
    )
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    return spec


def _start(spec: Path, out: Path, cache: Path) -> subprocess.Popen[bytes]:
    # A subprocess on purpose: the tests send it SIGINT/SIGTERM.
    env = {**os.environ, "PROMPTSPEC_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-m", "promptspec.cli", "build", "--spec", str(spec), "--base", "none", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _staging(out: Path) -> list[Path]:
    return [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


def _kill_while_writing(proc: subprocess.Popen[bytes], out: Path, sig: int) -> None:
    """Send `sig` once the new site is being staged beside `out` and has files in it."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail("the build finished before it could be interrupted; make the test spec bigger")
        staged = _staging(out)
        if staged and any(staged[0].rglob("*.md")):
            proc.send_signal(sig)
            proc.wait(timeout=60)
            return
        time.sleep(0.002)
    proc.kill()
    pytest.fail("the build never started writing")


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a site `build --out` made of the embedded spec, the token cache it
    counted into), once for this file: each test copies the site as the one
    its interrupted build must leave alone, and its builds share the cache
    (a warm cache only shortens the counting before the new site is staged)."""
    root = tmp_path_factory.mktemp("previous")
    out, cache = root / "public", root / "cache"
    first = subprocess.run([sys.executable, "-m", "promptspec.cli", "build", "--base", "none", "--out", str(out)],
                           capture_output=True, env={**os.environ, "PROMPTSPEC_CACHE_DIR": str(cache)})
    assert first.returncode == 0, first.stderr.decode()
    return out, cache


def _previous_site(previous: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "public"
    shutil.copytree(previous[0], out)
    return out, previous[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupted_build_keeps_the_previous_site(previous, tmp_path: Path, sig: int) -> None:
    out, cache = _previous_site(previous, tmp_path)
    before = _tree(out)
    assert len(before) > 50

    proc = _start(_big_spec(tmp_path), out, cache)
    _kill_while_writing(proc, out, sig)
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    assert _tree(out) == before, "the previous site changed"
    assert _staging(out) == [], "staging folders were left behind"


def test_killed_build_leaves_old_site_and_next_build_cleans_up(previous, tmp_path: Path) -> None:
    out, cache = _previous_site(previous, tmp_path)
    env = {**os.environ, "PROMPTSPEC_CACHE_DIR": str(cache)}
    before = _tree(out)

    proc = _start(_big_spec(tmp_path), out, cache)
    _kill_while_writing(proc, out, signal.SIGKILL)
    assert _tree(out) == before, "SIGKILL mid-write changed the previous site"

    assert _staging(out), "the killed build left no staging folder, so nothing is left to clean up"
    # The next build (of the small spec: the big one only had to be slow to kill) removes it.
    again = subprocess.run([sys.executable, "-m", "promptspec.cli", "build", "--base", "none", "--out", str(out)], capture_output=True, env=env)
    assert again.returncode == 0, again.stderr.decode()
    assert _staging(out) == []
    assert _tree(out) == before
