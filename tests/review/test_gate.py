"""review/gate.py: `diff` and `check` as library calls: typed options in,
the report, the gates' messages and the exit status out, nothing printed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from promptspec import pipeline
from promptspec.errors import UsageError
from promptspec.review import lockfile
from promptspec.review.diff import compare
from promptspec.review.gate import DiffOptions, finish_check, finish_diff

from _helpers import TEMPLATES


@pytest.mark.parametrize(("options", "message"), [
    ({"fail_on_increase": "lots"}, "increase"),
    ({"format": "markdown", "max_chars": 10}, "--max-chars must be at least"),
    ({"budget": -1}, "--budget must not be negative"),
])
def test_bad_options_are_refused_when_made(options, message) -> None:
    with pytest.raises(UsageError, match=message):
        DiffOptions("HEAD", **options)


def _grown(tmp_path: Path) -> Path:
    head = tmp_path / "head"
    shutil.copytree(TEMPLATES, head)
    frag = sorted((head / "fragments").glob("*.md"))[0]
    frag.write_text(frag.read_text(encoding="utf-8") + "\n" + "More words for every variant. " * 40, encoding="utf-8")
    return head


def test_diff_returns_its_report_and_gates_without_printing(tmp_path, capsys) -> None:
    base, head = pipeline.run(TEMPLATES), pipeline.run(_grown(tmp_path))
    diff = compare(base, head)
    quiet = finish_diff(diff, head, DiffOptions("HEAD"))
    gated = finish_diff(diff, head, DiffOptions("HEAD", fail_on_increase="1"))
    assert capsys.readouterr() == ("", "")
    assert quiet.status == 0 and quiet.messages == "" and quiet.report and quiet.diff.changed
    assert gated.status == 1 and gated.report == quiet.report
    assert gated.messages.startswith(f"promptspec: {len(diff.changed)} variant(s) grew by more than 1 ")


def test_check_returns_its_report_and_status_without_printing(tmp_path, capsys) -> None:
    result = pipeline.run(TEMPLATES)
    lock = lockfile.read(TEMPLATES / lockfile.LOCK_FILE)  # the committed lock, conversations included
    same = finish_check(lock, result, tmp_path / "prompts.lock.json", TEMPLATES, "text", "0")
    stale = finish_check(lock, pipeline.run(_grown(tmp_path)), tmp_path / "prompts.lock.json", TEMPLATES, "text", "0")
    assert capsys.readouterr() == ("", "")
    assert same.status == 0 and "matches the spec" in same.report
    assert stale.status == 1 and "is out of date" in stale.report
