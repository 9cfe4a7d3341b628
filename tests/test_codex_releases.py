"""The Codex releases the suite runs have one list, tests/codex_releases.txt:
`.ci/run` installs each before the tests start (no download inside the test
run), and codex_release.codex_install refuses a release the list lacks, so a
test that starts using a new release cannot leave `.ci/run` behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import codex_release
from codex_release import REPO


def _ci_run_reads(cwd: Path) -> list[str]:
    """What `.ci/run` makes of tests/codex_releases.txt under `cwd`: its own
    line that reads the list, run by bash as the job runs it."""
    line = next(l for l in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if l.startswith("releases=$("))
    done = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}; printf '%s\\n' $releases"], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_ci_run_installs_the_releases_the_tests_read(tmp_path, monkeypatch):
    assert _ci_run_reads(REPO) == list(codex_release.releases())
    assert codex_release.PINNED in codex_release.releases()
    # The two readers agree on comments, blank lines and stray spaces too.
    listed = tmp_path / "tests" / "codex_releases.txt"
    listed.parent.mkdir()
    listed.write_text("# a comment\n\n  0.1.0  \n   # an indented comment\n0.2.0\n\t\n", encoding="utf-8")
    monkeypatch.setattr(codex_release, "RELEASES_FILE", listed)
    assert _ci_run_reads(tmp_path) == list(codex_release.releases()) == ["0.1.0", "0.2.0"]


def test_a_release_the_list_lacks_is_refused_before_any_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMPTSPEC_CODEX_CACHE", str(tmp_path))
    with pytest.raises(AssertionError, match=r"Codex 0\.0\.1 is not in codex_releases\.txt: add it there"):
        codex_release.codex_install("0.0.1")
    assert list(tmp_path.iterdir()) == []  # no lock file, no npm folder
