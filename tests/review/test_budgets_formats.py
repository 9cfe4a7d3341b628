"""Budgets that gate, machine-readable findings, variant comparison, and the
small pure helpers behind the reports (axis summaries, word diffs)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from promptspec.cli import main
from promptspec.errors import SpecError
from promptspec.measure.counter import TokenCounter
from promptspec.pipeline import run
from promptspec.review import reach, worddiff
from promptspec.review.budgets import result_breaches
from promptspec.review.pair import compare_variants
from promptspec.site.index import SiteIndex
from promptspec.site.pages.matrix_page import matrix_page
from promptspec.spec.readers.load import load_spec
from promptspec.util import annotations

from _helpers import TEMPLATES


def cli(capsys, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(tmp_path / "cache"), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    dest = tmp_path / "templates"
    shutil.copytree(TEMPLATES, dest)
    return dest


def add_budgets(spec: Path, text: str) -> None:
    with (spec / "spec.yaml").open("a", encoding="utf-8") as fh:
        fh.write("\nbudgets:\n" + text)


# ---------------------------------------------------------------------------
# Budgets


def test_check_fails_on_a_spec_over_its_budget_and_the_matrix_marks_the_cell(spec, tmp_path, capsys) -> None:
    counter = TokenCounter(tmp_path / "cache")
    result = run(spec, counter=counter)
    legacy = sorted((m.total, m.request.variant.id) for m in result.measures if m.request.model == "harbor-4-legacy")
    limit = legacy[len(legacy) // 2][0]  # half of the legacy variants are over it
    over = sorted(vid for total, vid in legacy if total > limit)
    assert over
    assert cli(capsys, tmp_path, "lock", "--spec", str(spec))[0] == 0
    add_budgets(spec, f"  harbor-4-legacy:\n    max_tokens: {limit}\n")
    code, out, _ = cli(capsys, tmp_path, "check", "--spec", str(spec))
    assert code == 1
    assert "matches the spec" in out  # the lock still matches: the budget alone fails the check
    line = (spec / "spec.yaml").read_text(encoding="utf-8").splitlines().index("  harbor-4-legacy:") + 1
    totals = sorted(t for t, v in legacy if v in over)
    shown = str(totals[0]) if totals[0] == totals[-1] else f"{totals[0]}…{totals[-1]}"
    lines = [ln for ln in out.splitlines() if "max_tokens" in ln]  # one line for the budget, not one a variant
    assert len(lines) == 1 and lines[0].endswith(f": {shown} tokens > budgets.harbor-4-legacy.max_tokens {limit} (spec.yaml:{line})")
    assert lines[0].lstrip().startswith(f"{len(over)} of 88 variants")  # counted, by axis where rules fit (reach.py)
    code, out, _ = cli(capsys, tmp_path, "check", "--spec", str(spec), "--format", "json")
    assert code == 1 and sorted(b["variant"] for b in json.loads(out)["budget_breaches"]) == over

    # The matrix: exactly the cells over budget are marked.
    result = run(spec, counter=counter)
    page = matrix_page(SiteIndex(result))
    marked = re.findall(r'<td class="[^"]*ps-over-budget[^"]*" title="([^:"]+):', page)
    assert sorted(marked) == over
    assert page.count("⚠ over budget</span>") == len(over)


def test_budget_percent_and_delta(spec, tmp_path, capsys) -> None:
    add_budgets(spec, "  all:\n    max_percent: 0.25\n    max_delta: 5\n")
    result = run(spec, counter=TokenCounter(tmp_path / "cache"))
    want = sorted(m.request.variant.id for m in result.measures if m.percent_of_usable is not None and m.percent_of_usable > 0.25)
    assert want and sorted({b.variant for b in result_breaches(result)}) == want
    # diff: a change adding more than 5 tokens to a variant breaks max_delta and exits 1.
    base = tmp_path / "base"
    shutil.copytree(spec, base)
    with (spec / "modes/plan.md").open("a", encoding="utf-8") as fh:
        fh.write("List every risk you can see, one per line, with how likely it is.\n")
    code, out, err = cli(capsys, tmp_path, "diff", str(base), str(spec), "--format", "json")
    assert code == 1
    deltas = [b for b in json.loads(out)["budget_breaches"] if b["figure"] == "Δ tokens"]
    assert deltas and all(b["value"] > 5 and b["limit"] == 5 and "/plan/" in b["variant"] for b in deltas)
    grouped = [ln for ln in err.splitlines() if "max_delta" in ln]
    assert len(grouped) == 1 and "tokens added > budgets.all.max_delta 5 (spec.yaml:" in grouped[0]
    assert "mode = plan" in grouped[0] and f"{len(deltas)} of " in grouped[0]
    # The pull-request comment: one alert per budget, not one a variant.
    code, out, _ = cli(capsys, tmp_path, "diff", str(base), str(spec), "--format", "markdown")
    alerts = [ln for ln in out.splitlines() if ln.startswith("- :warning:") and "max&#95;delta" in ln]
    assert code == 1 and len(alerts) == 1, alerts
    assert "mode &#61; plan" in alerts[0] and "max&#95;delta 5" in alerts[0] and "spec.yaml&#58;" in alerts[0]
    assert "total Δ" not in out


def test_fail_on_budget_turns_alerts_into_exit_1(spec, tmp_path, capsys) -> None:
    base = tmp_path / "base"
    shutil.copytree(spec, base)
    with (spec / "modes/plan.md").open("a", encoding="utf-8") as fh:
        fh.write("One more line.\n")
    result = run(base, counter=TokenCounter(tmp_path / "cache"))
    budget = max(m.total for m in result.measures if m.request.variant.mode == "plan")
    assert cli(capsys, tmp_path, "diff", str(base), str(spec), "--budget", str(budget))[0] == 0
    code, _, err = cli(capsys, tmp_path, "diff", str(base), str(spec), "--budget", str(budget), "--fail-on-budget")
    assert code == 1 and f"now goes over --budget {budget} tokens" in err


@pytest.mark.parametrize("text, message", [
    ("  nosuch:\n    max_tokens: 1\n", "matches no model"),
    ("  all:\n    max_tokns: 1\n", "unknown key 'max_tokns'"),
    ("  all:\n    max_tokens: -1\n", "must not be negative"),
    ("  all:\n    max_percent: 150\n", "0-100"),
    ("  all:\n    max_delta: lots\n", "max_delta must be a number"),
])
def test_bad_budgets_are_one_line_errors(spec, text, message) -> None:
    add_budgets(spec, text)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert message in str(info.value) and "spec.yaml:" in str(info.value)


# ---------------------------------------------------------------------------
# --format github / sarif


def test_github_commands_escape_what_the_runner_parses() -> None:
    note = annotations.Annotation("templates/a,b:c.md", 3, "error", "PS101", "title: with, commas", "line one\nline two 100% done\r::warning::x")
    out = annotations.github([note])
    assert out.count("\n") == 1  # one command, whatever the text holds
    assert out == ("::error file=templates/a%2Cb%3Ac.md,line=3,title=title%3A with%2C commas::"
                   "line one%0Aline two 100%25 done%0D::warning::x\n")


def test_lint_and_check_formats(spec, tmp_path, capsys, monkeypatch) -> None:
    (spec / "fragments/apps.yaml").write_text((spec / "fragments/apps.yaml").read_text(encoding="utf-8").replace("slot: apps", "slot: agents_md"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, tmp_path, "lint", "--spec", str(spec), "--format", "github")
    assert code == 1
    assert re.search(r"^::error file=templates/fragments/apps\.yaml,line=\d+,title=PS101 role-matches-slot \(apps\)::", out, re.M)
    code, out, _ = cli(capsys, tmp_path, "lint", "--spec", str(spec), "--format", "sarif")
    log = json.loads(out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = log["runs"]
    rules = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    results = run_["results"]
    assert results and {r["ruleId"] for r in results} <= set(rules)
    first = next(r for r in results if r["ruleId"] == "PS101")
    assert rules[first["ruleIndex"]] == "PS101" and first["level"] == "error"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "templates/fragments/apps.yaml" and loc["region"]["startLine"] >= 1

    spec2 = tmp_path / "clean" / "templates"
    shutil.copytree(TEMPLATES, spec2)
    assert cli(capsys, tmp_path, "lock", "--spec", str(spec2))[0] == 0
    with (spec2 / "personalities/friendly.md").open("a", encoding="utf-8") as fh:
        fh.write("Thank the user when they help.\n")
    code, out, _ = cli(capsys, tmp_path, "check", "--spec", str(spec2), "--format", "sarif")
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "lock-out-of-date"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "clean/templates/personalities/friendly.md"


# ---------------------------------------------------------------------------
# compare


def test_compare_two_variants(tmp_path, capsys) -> None:
    result = run(TEMPLATES, counter=TokenCounter(tmp_path / "cache"))
    a, b = "harbor-5/pragmatic/default/workspace-write", "harbor-5/friendly/default/workspace-write"
    pair = compare_variants(result, a, b)
    ma = next(m for m in result.measures if m.request.variant.id == a)
    mb = next(m for m in result.measures if m.request.variant.id == b)
    assert (pair.total_a, pair.total_b) == (ma.total, mb.total)
    assert pair.axes == (("personality", "pragmatic", "friendly"),)
    # harbor-5 bakes the personality into its instructions: that is the only part that differs.
    assert [p.name for p in pair.differing] == ["(instructions)"]
    assert ma.request.base.text != mb.request.base.text
    assert all(p.kind == "same" for p in pair.parts if p.name != "(instructions)")
    code, out, _ = cli(capsys, tmp_path, "compare", a, "personality=friendly", "--spec", str(TEMPLATES), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["b"] == b and data["delta"] == mb.total - ma.total
    code, _, err = cli(capsys, tmp_path, "compare", a, "personality=nosuch", "--spec", str(TEMPLATES))
    assert code == 2 and err.count("\n") == 1 and "no variant" in err
    # A model that cannot carry the personality in its instructions gets a section instead.
    pair = compare_variants(result, "harbor-4-legacy/pragmatic/default/workspace-write", "harbor-4-legacy/friendly/default/workspace-write")
    assert "personality_spec" in [p.name for p in pair.differing]


# ---------------------------------------------------------------------------
# Pure helpers


AXES = [("model", ["m1", "m2"]), ("personality", ["a", "b"]), ("mode", ["x", "y", "z"])]
ALL = [f"{m}/{p}/{o}" for m in ["m1", "m2"] for p in ["a", "b"] for o in ["x", "y", "z"]]


def test_axis_summaries() -> None:
    """reach.describe: the counted line of `diff` and `check`, the same rules
    and wording as a history's reach (one mechanism for both)."""
    ys = [v for v in ALL if v.endswith("/y")]
    assert reach.describe(ys, ALL, AXES) == "4 of 12 variants — mode = y (all models)"
    m1_not_z = [v for v in ALL if v.startswith("m1/") and not v.endswith("/z")]
    assert reach.describe(m1_not_z, ALL, AXES) == "4 of 12 variants — model = m1, mode ∈ {x, y}"
    assert reach.describe(ALL, ALL, AXES) == "all 12 variants"
    assert reach.describe([], ALL, AXES) == "no variants (of 12)"
    odd = ["m1/a/x", "m2/b/y"]  # no axis rule describes these: ids
    assert reach.describe(odd, ALL, AXES) == "2 of 12 variants: m1/a/x, m2/b/y"
    assert reach.describe([*ys, "m1/a/x"], ALL, AXES) == "5 of 12 variants — mode = y (all models); 1 variant: m1/a/x"
    not_x = [v for v in ALL if not v.endswith("/x")]
    assert reach.describe(not_x, ALL, [("model", ["m1", "m2"]), ("personality", ["a", "b"]), ("mode", ["z", "y", "x"])]) \
        == "8 of 12 variants — mode ∈ {z, y} (all models)"  # values in the spec's order
    # An excluded cell does not break a rule: the rule is checked against the variants that exist.
    some = [v for v in ALL if v != "m2/b/y"]
    assert reach.describe([v for v in some if v.endswith("/y")], some, AXES) == "3 of 11 variants — mode = y (all models)"
    # An id of another shape counts, by id.
    assert reach.describe([*ys, "other"], [*ALL, "other"], AXES) == "5 of 13 variants — mode = y (all models); 1 variant: other"


def test_word_diff_marks_only_changed_words() -> None:
    diff = "--- a\n+++ b\n@@ -1 +1 @@\n-Run the tests before you report a task as done.\n+Run the full tests before you report a task as finished.\n"
    (pair,) = list(worddiff.line_pairs(diff))
    marked = worddiff.markup(worddiff.word_ops(*pair), lambda t: t.replace("<", "&lt;"), context=100)
    assert marked == "Run the<ins> full</ins> tests before you report a task as <del>done</del><ins>finished</ins>."
    assert worddiff.long_line_changes(diff, str, min_len=200) == []
    escaped = worddiff.markup(worddiff.word_ops("a <b> c", "a <i> c"), lambda t: t.replace("<", "&lt;"))
    assert "<b>" not in escaped and "&lt;" in escaped


def test_huge_changes_stay_fast() -> None:
    """Word and line diffs have budgets: a hostile one-line or many-line edit cannot stall a report."""
    import time

    from promptspec.review.diff import section_diff

    # CPU time, not wall time: a shared, loaded machine must not make this flaky. An
    # unbudgeted difflib over these inputs takes minutes; the budgets keep it well under a second.
    started = time.process_time()
    old, new = " ".join(f"w{i}" for i in range(60_000)), " ".join(f"v{i}" for i in range(60_000))
    assert worddiff.word_ops(old, new) == [("-", old), ("+", new)]
    before = "\n".join(f"line {i}" for i in range(20_000))
    after = "\n".join(f"other {i}" for i in range(20_000))
    out = section_diff(before, after, "base: section x", "head: section x")
    assert "too many changed lines" in out and out.startswith("--- base: section x\n+++ head: section x\n")
    spent = time.process_time() - started
    assert spent < 5, f"{spent:.1f} s of CPU for two budgeted diffs"



def test_word_view_keeps_the_spaces_at_the_edges_of_a_change() -> None:
    """md_escape folds whitespace; the word view kept its runs' edge spaces
    anyway, so an insertion does not read `verified.<ins>For`."""
    from promptspec.util.gh_markdown import md_escape

    ops = worddiff.word_ops("run the tests then stop", "run the unit tests then stop")
    assert ("+", " unit") in ops  # a run with a space at its edge
    marked = worddiff.markup(ops, md_escape)
    assert marked == "run the<ins> unit</ins> tests then stop", marked


def test_check_says_added_for_a_file_the_lock_never_saw(spec, tmp_path, capsys) -> None:
    assert cli(capsys, tmp_path, "lock", "--spec", str(spec))[0] == 0
    tool = (spec / "tools" / "shell.yaml").read_text(encoding="utf-8").replace("name: shell", "name: run_tests")
    (spec / "tools" / "run_tests.yaml").write_text(tool, encoding="utf-8")
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    (spec / "spec.yaml").write_text(text.replace("order: [shell,", "order: [shell, run_tests,"), encoding="utf-8")
    with (spec / "modes" / "plan.md").open("a", encoding="utf-8") as fh:
        fh.write("One more line.\n")
    code, out, _ = cli(capsys, tmp_path, "check", "--spec", str(spec))
    assert code == 1
    assert "  tools/run_tests.yaml added: reaches" in out and "  modes/plan.md changed: reaches" in out
