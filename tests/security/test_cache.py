"""F6: the token cache is an optimisation that may come from anywhere (a
committed file, a CI cache restore): gate commands never take counts from it,
impossible counts are recounted, and a file that is not our plain table
cannot hang a command."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from _attack import cli, python, small_spec
from promptspec.measure.counter import TokenCounter

TEXT = "Hello world, this sentence is long enough to have a few tokens in it.\n" * 20


def _poison(cache: Path, count: int = 1) -> int:
    with sqlite3.connect(cache / "token-counts.sqlite3") as conn:
        return conn.execute("UPDATE token_counts SET count = ?", (count,)).rowcount


def test_poisoned_counts_do_not_pass_the_gate(tmp_path: Path) -> None:
    base = small_spec(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / "fragments" / "greeting.md").write_text("Hello {{ who }}. " + "Much longer now. " * 300 + "\n")
    cache = tmp_path / "cache"
    args = ("--cache-dir", str(cache), "diff", str(base), str(head), "--fail-on-increase", "10%")
    assert cli(*args).returncode == 1
    assert _poison(cache) > 0  # the PR commits a cache with every count set to 1
    proc = cli(*args)
    assert proc.returncode == 1, proc.stdout
    assert cli("--cache-dir", str(cache), "lock", "--spec", str(head)).returncode == 0
    _poison(cache)
    assert cli("--cache-dir", str(cache), "check", "--spec", str(head)).returncode == 0  # recounted: still matches


def test_counter_verify_and_plausibility(tmp_path: Path) -> None:
    honest = TokenCounter(tmp_path).count(TEXT, "o200k_base")
    _poison(tmp_path, 1)
    assert TokenCounter(tmp_path, verify=True).count(TEXT, "o200k_base") == honest
    _poison(tmp_path, 1)  # (the verified count was written back)
    with pytest.warns(Warning, match="impossible"):
        assert TokenCounter(tmp_path).count(TEXT, "o200k_base") == honest  # 1 token for 1.4 KB cannot be


def test_a_view_over_an_endless_cte_cannot_hang(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "token-counts.sqlite3") as conn:
        conn.execute(
            "CREATE VIEW token_counts AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
            "SELECT 'o200k_base' AS encoding, printf('%064d', x) AS sha256, x AS count FROM c"
        )
    proc = python(
        "import warnings; warnings.simplefilter('ignore'); from promptspec.measure.counter import TokenCounter; "
        f"print(TokenCounter({str(tmp_path)!r}).count('hello world', 'o200k_base'))",
        timeout=30,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "2", proc.stderr[-2000:]
    spec = small_spec(tmp_path / "s")
    proc = cli("--cache-dir", str(tmp_path), "list", "--spec", str(spec), timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert all(line.startswith("promptspec: warning: ") for line in proc.stderr.splitlines())  # one line, not Python's two
