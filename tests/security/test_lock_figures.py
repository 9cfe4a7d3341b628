"""R17 (second red-team pass): `check` compares every figure the lock records.

A committed lock is pull-request input, and its per-section tokens and hashes,
instruction counts and source digests are what later checks, diffs and the
site's Changes page explain changes with; a lock whose figures were invented
must not "match the spec"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _attack import run_main, small_spec


def _forge(lock: Path, how) -> None:
    data = json.loads(lock.read_text())
    how(data, next(iter(data["variants"].values())))
    lock.write_text(json.dumps(data, indent=2, sort_keys=True))


def _section(v: dict) -> dict:
    return next(iter(v["sections"].values()))


FORGERIES = {
    "section tokens": lambda d, v: _section(v).update(tokens=_section(v)["tokens"] + 5),
    "section hash": lambda d, v: _section(v).update(sha256="0" * 64),
    "instruction tokens": lambda d, v: v["instructions"].update(tokens=999),
    "message counts": lambda d, v: v["tokens"].update({k: 1 for k in v["tokens"] if k != "total"}),
    "source digests": lambda d, v: d.update(sources={k: "0" * 16 for k in d["sources"]}),
}


@pytest.mark.parametrize("what", sorted(FORGERIES))
def test_a_lock_with_forged_figures_is_out_of_date(tmp_path: Path, capsys, what: str) -> None:
    spec = small_spec(tmp_path / "s")
    assert run_main(capsys, "lock", "--spec", str(spec)).returncode == 0
    assert run_main(capsys, "check", "--spec", str(spec)).returncode == 0
    lock = spec / "prompts.lock.json"
    before = lock.read_text()
    _forge(lock, FORGERIES[what])
    assert lock.read_text() != before
    out = run_main(capsys, "check", "--spec", str(spec))
    assert out.returncode == 1 and "out of date" in out.stdout, out.stdout
