"""R7, R8 (second red-team pass): every text diff and every parse of
pull-request input has a budget.  A lock side's ids cost linear time in the
file; history's text diffs and part matching, compare and verify's short diff
share diff's line budget (util/textdiff.py).  Each attack runs in a child with
1 GB of memory and a time limit, so the old code fails the test instead of
taking the run down."""

from __future__ import annotations

import json
import time
from pathlib import Path

from _attack import cli, git, repo_with_spec

PATTERN_A = "".join(f"v{i % 101}\n" for i in range(16000))
PATTERN_B = "".join(f"v{(i * 7) % 101}\n" for i in range(16000))  # same lines, every one moved: difflib's worst case


def test_a_lock_side_with_a_very_long_id_costs_linear_time(tmp_path: Path) -> None:
    evil = {"/" * 200_000: {"sha256": "x", "tokens": {"total": 1}}}
    evil.update({f"m{i}": {"sha256": "x", "tokens": {"total": 1}} for i in range(1000)})
    (tmp_path / "evil.lock.json").write_text(json.dumps({"format": 1, "variants": evil}))
    (tmp_path / "ok.lock.json").write_text(json.dumps({"format": 1, "variants": {"m1": {"sha256": "y", "tokens": {"total": 2}}}}))
    t0 = time.monotonic()
    proc = cli("history", "lock:ok.lock.json", "lock:evil.lock.json", "--format", "markdown", cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert time.monotonic() - t0 < 30
    assert "1,001" in proc.stdout or "1001" in proc.stdout  # every variant of the side is there


def test_history_text_diffs_share_the_diff_budget(tmp_path: Path) -> None:
    repo = repo_with_spec(tmp_path / "repo", files={"fragments/greeting.md": PATTERN_A})
    (repo / "templates/fragments/greeting.md").write_text(PATTERN_B)
    git(repo, "commit", "-qam", "every line moved")
    proc = cli("history", "rev:HEAD~1", "rev:HEAD", "--spec", "templates", "--format", "markdown", cwd=repo, timeout=60)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "too many changed lines" in proc.stdout


def test_verify_short_diff_and_part_matching_are_budgeted() -> None:
    from promptspec.oracle.compare import short_diff
    from promptspec.util.textdiff import similar

    a = "".join(f"v{i % 101}\n" for i in range(12000))
    b = "".join(f"v{(i * 7) % 101}\n" for i in range(12000))
    t0 = time.monotonic()
    out = short_diff(a, b)
    assert "too many changed lines" in out
    assert similar(a.splitlines(), b.splitlines(), 0.5) in (True, False)
    assert time.monotonic() - t0 < 5
    assert short_diff("a\nb\n", "a\nc\n").splitlines()[2:] == ["@@ -1,2 +1,2 @@", " a", "-b", "+c"]
