"""Review: `promptspec diff`, `lock`, `check`, and the review API the site uses.

A real temporary git repository holds two commits of the embedded spec; the
second edits a fragment, adds a mode, reorders a slot in `layout:`, and
changes one model's instructions template (and its auto-compaction limit).
Expected figures are recomputed apart from the diff: payloads via
export.responses_payload, tokens by recounting every text with TokenCounter
(the same encoder; that its counts are exact is tests/measure/'s job, against
tiktoken's own encodings).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from promptspec.assemble import export
from promptspec.review import lockfile
from promptspec import review
from promptspec.assemble.builder import Assembler
from promptspec.assemble.matrix import matrix
from promptspec.cli import main
from promptspec.pipeline import run
from promptspec.spec.readers.load import load_spec
from promptspec.measure.counter import TokenCounter
from promptspec.measure.encodings import encoding_for_model

from _helpers import REPO, TEMPLATES, commit, git

REALTIME_ADDITION = "Repeat file names back slowly; say `done` when a step is finished. ```` @everyone <details> | pipe\n"
MINI_TEMPLATE_ADDITION = "- Never let a ```fenced``` example end your answer early.\n"
NEW_LAYOUT = [
    "developer_extensions", "model_switch", "permissions", "developer_instructions", "collaboration_mode",
    "realtime", "personality", "apps", "skills", "plugins", "token_budget",
]
MINI_COMPACT_LIMIT = 800


def copy_spec(dest: Path) -> Path:
    shutil.copytree(TEMPLATES, dest, ignore=shutil.ignore_patterns(lockfile.LOCK_FILE))
    return dest


def with_layout(text: str) -> str:
    """spec.yaml with NEW_LAYOUT as the developer slots (inside its existing `layout:`)."""
    assert "\nlayout:\n" in text
    return text.replace("\nlayout:\n", "\nlayout:\n  developer: [" + ", ".join(NEW_LAYOUT) + "]\n", 1)


def edit_spec(spec: Path) -> None:
    """The four edits of the second commit."""
    with (spec / "fragments" / "realtime.md").open("a", encoding="utf-8") as fh:
        fh.write(REALTIME_ADDITION)
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    anchor = "  pair_programming:\n    display_name: Pair Programming\n"
    assert anchor in text
    text = text.replace(anchor, "  review:\n    display_name: Review\n    description: Review a diff.\n    template: modes/review.md\n" + anchor)
    text = with_layout(text)
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    (spec / "modes" / "review.md").write_text("# Mode: Review\n\nRead the diff and list problems, most serious first.\n", encoding="utf-8")
    models = json.loads((spec / "models.json").read_text(encoding="utf-8"))
    mini = next(m for m in models["models"] if m["slug"] == "harbor-5-mini")
    mini["model_messages"]["instructions_template"] += MINI_TEMPLATE_ADDITION
    mini["auto_compact_token_limit"] = MINI_COMPACT_LIMIT
    (spec / "models.json").write_text(json.dumps(models, indent=2) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("review-token-cache")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A git repository whose templates/ went through two commits, plus plain copies of both sides."""
    root = tmp_path_factory.mktemp("review-repo")
    work = root / "repo"
    work.mkdir()
    git(work, "init", "-q")
    copy_spec(work / "templates")
    (work / "README.md").write_text("a project with a prompt spec\n")
    commit(work, "first")
    base_copy = copy_spec(root / "base-copy" / "templates")
    edit_spec(work / "templates")
    commit(work, "second")
    head_copy = root / "head-copy" / "templates"
    shutil.copytree(work / "templates", head_copy)
    return {"root": root, "repo": work, "spec": work / "templates", "base": base_copy, "head": head_copy}


def cli(capsys: pytest.CaptureFixture[str], cache: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(cache), *argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# Independent expectations


def payloads(spec_dir: Path) -> dict[str, dict]:
    spec = load_spec(spec_dir)
    asm = Assembler(spec)
    return {v.id: export.responses_payload(asm.assemble(v)) for v in matrix(spec)}


def recount(spec_dir: Path, counter: TokenCounter) -> dict[str, int]:
    """Total tokens per variant: every text of the payload counted again, then added up."""
    spec = load_spec(spec_dir)
    out = {}
    for vid, payload in payloads(spec_dir).items():
        enc = encoding_for_model(payload["model"], spec.encodings)
        messages = [item for item in payload["input"] if item["type"] == "message"]
        texts = [payload["instructions"]] + [part["text"] for msg in messages for part in msg["content"]]
        # Tools: the list as the body carries it (field or additional_tools item), compact JSON.
        tools = payload.get("tools") or [t for item in payload["input"] if item["type"] == "additional_tools" for t in item["tools"]]
        if tools:
            texts.append(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
        out[vid] = sum(counter.count(t, enc) for t in texts)
    return out


def estimates(spec_dir: Path) -> dict[str, int]:
    """Codex's estimate per variant, recomputed: ⌈UTF-8 bytes / 4⌉ of every text, added up."""
    out = {}
    for vid, payload in payloads(spec_dir).items():
        messages = [item for item in payload["input"] if item["type"] == "message"]
        texts = [payload["instructions"]] + [part["text"] for msg in messages for part in msg["content"]]
        tools = payload.get("tools") or [t for item in payload["input"] if item["type"] == "additional_tools" for t in item["tools"]]
        if tools:
            texts.append(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
        out[vid] = sum(-(-len(t.encode("utf-8")) // 4) for t in texts)
    return out


@pytest.fixture(scope="module")
def expected(repo: dict[str, Path], cache: Path) -> dict:
    counter = TokenCounter(cache)
    pb, ph = payloads(repo["base"]), payloads(repo["head"])
    tb, th = recount(repo["base"], counter), recount(repo["head"], counter)
    common = set(pb) & set(ph)
    return {
        "added": sorted(set(ph) - set(pb)),
        "removed": sorted(set(pb) - set(ph)),
        "changed": sorted(v for v in common if pb[v] != ph[v]),
        "unchanged": sorted(v for v in common if pb[v] == ph[v]),
        "before": tb,
        "after": th,
        "estimate_after": estimates(repo["head"]),
        "realtime": sorted(v for v in common if v.split("/")[2] == "pair_programming"),
        "plan": sorted(v for v in common if v.split("/")[2] == "plan"),
        "mini": sorted(v for v in common if v.startswith("harbor-5-mini/")),
    }


def test_the_fixture_edits_do_what_the_tests_assume(expected: dict) -> None:
    assert len(expected["added"]) == 24 and all("/review/" in v for v in expected["added"])
    assert expected["removed"] == []
    assert expected["unchanged"], "some variants must be untouched by the edits"
    assert set(expected["realtime"]) | set(expected["plan"]) | set(expected["mini"]) == set(expected["changed"])


# ---------------------------------------------------------------------------
# diff: JSON


def run_json(capsys, cache: Path, *argv: str) -> dict:
    code, out, err = cli(capsys, cache, "diff", *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_json_diff_lists_variants_and_token_deltas(repo, cache, expected, capsys) -> None:
    data = run_json(capsys, cache, "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    assert data["counts"] == {"added": 24, "removed": 0, "changed": len(expected["changed"]), "unchanged": len(expected["unchanged"])}
    assert sorted(a["id"] for a in data["variants"]["added"]) == expected["added"]
    assert sorted(data["variants"]["unchanged"]) == expected["unchanged"]
    changed = {c["id"]: c for c in data["variants"]["changed"]}
    assert sorted(changed) == expected["changed"]
    for vid, c in changed.items():
        assert c["total_before"] == expected["before"][vid], vid
        assert c["total_after"] == expected["after"][vid], vid
        assert c["delta"] == expected["after"][vid] - expected["before"][vid], vid
        # The parts add up: the per-section deltas explain the whole change in total.
        parts = sum(s["delta"] for s in c["sections"]) + (c["instructions"]["delta"] if c["instructions"] else 0)
        assert parts == c["delta"], vid
    for a in data["variants"]["added"]:
        assert a["total"] == expected["after"][a["id"]]


def test_json_diff_groups_identical_changes(repo, cache, expected, capsys) -> None:
    data = run_json(capsys, cache, "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    by_fragment: dict[tuple[str, str], list[dict]] = {}
    for g in data["changes"]:
        by_fragment.setdefault((g["fragment"], g["kind"]), []).append(g)
    # One edit of realtime.md reaching 16 variants is one change, with its diff.
    (realtime,) = by_fragment[("realtime", "changed")]
    assert sorted(realtime["variants"]) == expected["realtime"]
    assert "fragments/realtime.md" in realtime["sources"]
    assert "+" + REALTIME_ADDITION.rstrip("\n") in realtime["diff"].splitlines()
    # The diff is headed by the rendered section and the file that changed, not by a template path.
    assert realtime["diff"].startswith("--- base: section realtime <realtime_conversation>\n"
                                       "+++ head: section realtime <realtime_conversation> (changed: fragments/realtime.md)\n")
    assert realtime["changed_files"] == ["fragments/realtime.md"]
    assert "No newline at end of file" not in realtime["diff"]
    # The models.json template edit: one instructions change (mini ignores personality); the
    # model_switch text that repeats them is a later-turn text, in no first request.
    (instr,) = by_fragment[(review.INSTRUCTIONS, "changed")]
    assert sorted(instr["variants"]) == expected["mini"]
    assert any(s.startswith("models.json#harbor-5-mini") for s in instr["sources"])
    assert all(t["delta"] == instr["tokens"][0]["delta"] for t in instr["tokens"])
    # The layout change: review_checklist moved to the front of the developer message, reported as a move.
    (moved,) = by_fragment[("review_checklist", "moved")]
    assert sorted(moved["variants"]) == expected["plan"]
    assert moved["delta_min"] == moved["delta_max"] == 0
    changed = {c["id"]: c for c in data["variants"]["changed"]}
    for vid in expected["plan"]:
        (move,) = changed[vid]["moves"]
        assert move["fragment"] == "review_checklist"
        assert move["position_after"] == 1 and move["position_before"] > 1
        assert move["order_after"][0] == "review_checklist" and move["order_before"][0] != "review_checklist"
        assert not any(s["fragment"] == "review_checklist" for s in changed[vid]["sections"])
    # No other change appears.
    assert set(by_fragment) == {("realtime", "changed"), (review.INSTRUCTIONS, "changed"), ("review_checklist", "moved")}


def test_json_diff_alerts_for_headroom_and_budget(repo, cache, expected, capsys) -> None:
    budget = 850
    data = run_json(capsys, cache, "HEAD~1", "HEAD", "--spec", str(repo["spec"]), "--budget", str(budget))
    b, a = expected["before"], expected["after"]
    est = expected["estimate_after"]  # Codex compares its estimate, not real tokens, with the limit
    want_headroom = sorted(
        [v for v in expected["mini"] if est[v] > MINI_COMPACT_LIMIT]
        + [v for v in expected["added"] if v.startswith("harbor-5-mini/") and est[v] > MINI_COMPACT_LIMIT]
    )
    assert want_headroom, "the fixture must push some variant past its compaction limit"
    assert sorted(r["id"] for r in data["headroom_crossings"]) == want_headroom
    want_budget = sorted([v for v in expected["changed"] if b[v] <= budget < a[v]] + [v for v in expected["added"] if a[v] > budget])
    assert want_budget
    assert sorted(r["id"] for r in data["budget_crossings"]) == want_budget
    increases = data["largest_increases"]
    assert increases[0]["delta"] == max(a[v] - b[v] for v in expected["changed"])
    assert [r["delta"] for r in increases] == sorted((r["delta"] for r in increases), reverse=True)


def test_json_diff_lists_changed_files(repo, cache, capsys) -> None:
    data = run_json(capsys, cache, "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    files = {f["path"]: f for f in data["files"]}
    assert {p: f["status"] for p, f in files.items()} == {
        "fragments/realtime.md": "modified", "models.json": "modified", "modes/review.md": "added", "spec.yaml": "modified",
    }
    assert len(files["fragments/realtime.md"]["variants"]) == 16


def test_head_defaults_to_the_working_tree_and_folders_work(repo, cache, capsys) -> None:
    by_rev = run_json(capsys, cache, "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    working = run_json(capsys, cache, "HEAD~1", "--spec", str(repo["spec"]))
    folders = run_json(capsys, cache, str(repo["base"]), str(repo["head"]))
    assert working["head"] == "working tree"
    assert re.fullmatch(r"HEAD~1 \([0-9a-f]{7}\)", working["base"])
    for other in (working, folders):
        for key in ("counts", "changes", "variants", "files"):
            assert other[key] == by_rev[key], key


def test_default_spec_is_templates_of_the_current_repository(repo, cache, capsys, monkeypatch) -> None:
    monkeypatch.chdir(repo["repo"])
    data = run_json(capsys, cache, "HEAD~1")
    assert data["counts"]["added"] == 24


def test_nothing_changed(repo, cache, capsys) -> None:
    code, out, _ = cli(capsys, cache, "diff", "HEAD", "--spec", str(repo["spec"]))
    assert code == 0
    assert "0 changed, 0 added, 0 removed" in out and "no differences" in out
    code, out, _ = cli(capsys, cache, "diff", "HEAD", "--spec", str(repo["spec"]), "--format", "markdown")
    assert "No assembled request changed." in out and "<details>" not in out


# ---------------------------------------------------------------------------
# diff: text and markdown


def test_text_diff(repo, cache, expected, capsys) -> None:
    code, out, err = cli(capsys, cache, "diff", "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    assert code == 0, err
    counts = f"variants: {len(expected['changed'])} changed, 24 added, 0 removed, {len(expected['unchanged'])} unchanged"
    assert counts in out
    assert re.search(r"\[c\d+\] section review_checklist \S+ moved \(developer\) in 24 of 112 variants — mode = plan", out)
    assert re.search(r"\[c\d+\] section realtime \S+ changed in 16 of 112 variants\S* [^;]*; Δ \+\d+ tokens", out)
    vid = expected["realtime"][0]
    b, a = expected["before"][vid], expected["after"][vid]
    assert f"  {vid}  {b} -> {a} (+{a - b})" in out
    assert "+" + REALTIME_ADDITION.rstrip("\n") in out.splitlines()
    for added in expected["added"]:
        assert f"  {added}  {expected['after'][added]} tokens" in out


def _fence_around(markdown: str, needle: str) -> str:
    """The fence of the code block holding the line `needle`; fails if the line is not inside one."""
    lines = markdown.splitlines()
    index = lines.index(needle)
    open_fence = None
    for line in lines[:index]:
        m = re.fullmatch(r"(`{3,})(diff)?", line)
        if m is None:
            continue
        if open_fence is None and m.group(2):
            open_fence = m.group(1)
        elif open_fence is not None and m.group(1) == open_fence and not m.group(2):
            open_fence = None
    assert open_fence is not None, f"{needle!r} is not inside a fenced block"
    closing = [i for i, line in enumerate(lines) if i > index and line == open_fence]
    assert closing, "the block is never closed"
    return open_fence


def test_markdown_diff(repo, cache, expected, capsys) -> None:
    code, out, err = cli(capsys, cache, "diff", "HEAD~1", "HEAD", "--spec", str(repo["spec"]), "--format", "markdown", "--budget", "850")
    assert code == 0, err
    assert len(out) <= 60000
    first_details = out.index("<details>")
    summary = out[:first_details]
    assert f"{len(expected['changed'])} changed · 24 added" in summary and "largest Δ" in summary and "Δ per variant" in summary and "total Δ" not in summary
    assert "<code>review&#95;checklist</code>" in summary and "moved (developer)" in summary
    assert "<code>realtime</code> <code>&#60;realtime&#95;conversation&#62;</code> changed" in summary
    assert "changed: <code>fragments/realtime.md</code>" in summary
    assert "**Alerts**" in summary and "Largest token increases" in out
    vid = expected["realtime"][0]
    b, a = expected["before"][vid], expected["after"][vid]
    row = f"| {review.md_code(vid)} | {b} | {a} | +{a - b} |"
    assert row in out
    # Spec text only ever appears inside diff fences that it cannot close.
    assert _fence_around(out, "+" + REALTIME_ADDITION.rstrip("\n")) == "`" * 5
    assert _fence_around(out, "+" + MINI_TEMPLATE_ADDITION.rstrip("\n")) == "`" * 4
    outside = re.sub(r"(?ms)^(`{3,})diff\n.*?^\1$", "", out)
    assert "@everyone" not in outside and "```` " not in outside
    assert outside.count("<details>") == outside.count("</details>")
    # one per change, largest increases, changed and added variants; and one per later-turn text the edits reach
    assert outside.count("<details>") - outside.count("in conversations</summary>") == 3 + 3
    assert "**Conversations**" in out
    assert "Cut to fit" not in out


def test_markdown_respects_the_size_cap(repo, cache, capsys) -> None:
    code, out, _ = cli(capsys, cache, "diff", "HEAD~1", "HEAD", "--spec", str(repo["spec"]), "--format", "markdown", "--max-chars", "4000")
    assert code == 0
    assert len(out) <= 4000
    assert "largest Δ" in out
    assert "Cut to fit 4000 characters" in out
    outside = re.sub(r"(?ms)^(`{3,})diff\n.*?^\1$", "", out)
    assert outside.count("<details>") == outside.count("</details>")
    for m in re.finditer(r"(?ms)^(`{3,})diff\n.*?^\1$", out):
        assert m.group(0).endswith(m.group(1))
    code, _, err = cli(capsys, cache, "diff", "HEAD~1", "--spec", str(repo["spec"]), "--format", "markdown", "--max-chars", "10")
    assert code == 2 and err.count("\n") == 1 and "--max-chars" in err


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert review.fence_for("plain") == "```"
    assert review.fence_for("a ``` b") == "````"
    assert review.fence_for("``````") == "```````"
    block = review.fenced("x\n`````\ny")
    assert block.startswith("``````diff\n") and block.endswith("\n``````\n")


def test_md_escape_neutralises_markdown_and_html() -> None:
    text = review.md_escape("<script>*x* _y_ [l](u) @team #1 a|b `c` $m$")
    bare = re.sub(r"&#[0-9]+;", "", text)
    for ch in "<>*_[]()@#|`$&":
        assert ch not in bare
    assert "&#60;script&#62;" in text


# ---------------------------------------------------------------------------
# --fail-on-increase


def test_fail_on_increase(repo, cache, expected, capsys) -> None:
    deltas = [expected["after"][v] - expected["before"][v] for v in expected["changed"]]
    biggest = max(deltas)
    args = ("diff", "HEAD~1", "HEAD", "--spec", str(repo["spec"]))
    code, _, err = cli(capsys, cache, *args, "--fail-on-increase", str(biggest))
    assert code == 0, err
    code, out, err = cli(capsys, cache, *args, "--fail-on-increase", str(biggest - 1))
    assert code == 1
    assert out.startswith("promptspec diff:")  # the report is still printed
    assert f"+{biggest}" in err and err.count("\n") == 1
    pct = max(100.0 * (expected["after"][v] - expected["before"][v]) / expected["before"][v] for v in expected["changed"])
    code, _, _ = cli(capsys, cache, *args, "--fail-on-increase", f"{pct + 0.01:.2f}%")
    assert code == 0
    code, _, _ = cli(capsys, cache, *args, "--fail-on-increase", f"{pct - 0.01:.2f}%")
    assert code == 1
    code, _, err = cli(capsys, cache, *args, "--fail-on-increase", "lots")
    assert code == 2 and "--fail-on-increase" in err


# ---------------------------------------------------------------------------
# Errors: one line, exit 2


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("promptspec: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_unknown_revision(repo, cache, capsys) -> None:
    code, out, err = cli(capsys, cache, "diff", "no-such-branch", "--spec", str(repo["spec"]))
    assert code == 2 and out == ""
    assert "unknown git revision 'no-such-branch'" in one_error_line(err)
    code, _, err = cli(capsys, cache, "diff", "HEAD~1", "nope~3", "--spec", str(repo["spec"]))
    assert code == 2 and "head: unknown git revision 'nope~3'" in one_error_line(err)


def test_not_a_git_repository(repo, cache, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    plain = copy_spec(tmp_path / "plain" / "templates")
    code, out, err = cli(capsys, cache, "diff", "HEAD", "--spec", str(plain))
    assert code == 2 and out == ""
    assert "is not inside a git repository" in one_error_line(err)


def test_not_a_spec(repo, cache, capsys, tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = cli(capsys, cache, "diff", str(tmp_path / "empty"), "--spec", str(repo["spec"]))
    assert code == 2 and "not a spec folder" in one_error_line(err)
    # A revision where the spec folder does not exist.
    code, _, err = cli(capsys, cache, "diff", "HEAD~1", "--spec", str(repo["repo"] / "nowhere"))
    assert code == 2 and "no folder 'nowhere'" in one_error_line(err)
    # A folder of the repository that is not a spec at that revision.
    code, _, err = cli(capsys, cache, "diff", "HEAD~1", "--spec", str(repo["spec"] / "fragments"))
    assert code == 2 and "is not a spec folder" in one_error_line(err)


def test_a_side_that_does_not_load_is_named(repo, cache, capsys, tmp_path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(repo["base"], broken)
    with (broken / "spec.yaml").open("a", encoding="utf-8") as fh:
        fh.write("no_such_key: 1\n")
    code, _, err = cli(capsys, cache, "diff", str(broken), str(repo["head"]))
    line = one_error_line(err)
    assert code == 2
    assert line.startswith(f"promptspec: error: base ({broken}): spec.yaml:")
    assert "unknown key 'no_such_key'" in line
    code, _, err = cli(capsys, cache, "diff", str(repo["base"]), str(broken))
    assert code == 2 and one_error_line(err).startswith(f"promptspec: error: head ({broken}): ")


def test_a_broken_revision_is_named(tmp_path, cache, capsys) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    git(work, "init", "-q")
    spec = copy_spec(work / "templates")
    (spec / "models.json").write_text("{not json", encoding="utf-8")
    commit(work, "broken")
    shutil.rmtree(spec)
    copy_spec(spec)
    code, _, err = cli(capsys, cache, "diff", "HEAD", "--spec", str(spec))
    line = one_error_line(err)
    assert code == 2
    assert re.match(r"promptspec: error: base \(HEAD \([0-9a-f]{7}\)\): models\.json", line), line
    assert str(tmp_path) not in line.replace(str(spec), "")  # the temporary copy is not shown


# ---------------------------------------------------------------------------
# lock / check


def test_lock_check_round_trip(tmp_path, cache, capsys) -> None:
    spec = copy_spec(tmp_path / "templates")
    lock = spec / lockfile.LOCK_FILE
    code, _, err = cli(capsys, cache, "check", "--spec", str(spec))
    assert code == 2 and "promptspec lock" in one_error_line(err)

    code, out, _ = cli(capsys, cache, "lock", "--spec", str(spec))
    assert code == 0 and "wrote" in out
    text = lock.read_text(encoding="utf-8")
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert sorted(p.name for p in spec.iterdir() if p.name.startswith(".")) == []  # no temp file left
    mtime = lock.stat().st_mtime_ns
    code, out, _ = cli(capsys, cache, "lock", "--spec", str(spec))
    assert code == 0 and "up to date" in out and lock.stat().st_mtime_ns == mtime

    code, out, _ = cli(capsys, cache, "check", "--spec", str(spec))
    assert code == 0 and "matches" in out

    # The hash is the sha256 of the canonical JSON of the Responses API payload.
    result = run(spec, counter=TokenCounter(cache))
    m = result.measures[0]
    canonical = json.dumps(export.responses_payload(m.request), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    entry = data["variants"][m.request.variant.id]
    assert entry["sha256"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert entry["tokens"]["total"] == m.total and entry["tokens"]["instructions"] == m.base
    assert [x["tokens"] for x in entry["tokens"]["messages"]] == list(m.messages)
    assert entry["tokens"]["codex_estimate"] == m.estimate and entry["encoding"] == m.encoding
    assert len(data["variants"]) == len(result.measures)

    # An edit: check fails and names what changed, with token deltas.
    with (spec / "fragments" / "realtime.md").open("a", encoding="utf-8") as fh:
        fh.write("One more sentence about voice sessions.\n")
    (spec / "modes" / "review.md").write_text("# Mode: Review\n\nList problems.\n", encoding="utf-8")
    text = (spec / "spec.yaml").read_text(encoding="utf-8").replace(
        "  pair_programming:\n    display_name", "  review:\n    template: modes/review.md\n  pair_programming:\n    display_name"
    )
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    code, out, _ = cli(capsys, cache, "check", "--spec", str(spec))
    assert code == 1
    new = run(spec, counter=TokenCounter(cache))
    old_totals = {vid: e["tokens"]["total"] for vid, e in data["variants"].items()}
    realtime = sorted(v for v in old_totals if "/pair_programming/" in v and not v.startswith("harbor-4"))
    assert out.splitlines()[0] == f"{lock} is out of date: {len(realtime)} changed, 24 added, 0 removed, {len(old_totals) - len(realtime)} unchanged"
    vid = realtime[0]
    after = new.measure_of(next(v for v in new.variants if v.id == vid)).total
    assert re.search(rf"changed {re.escape(vid)}  {old_totals[vid]} -> {after} \(\+{after - old_totals[vid]}\)  realtime \+\d+", out)
    assert "added   harbor-5/default/review/workspace-write" in out
    code, out, _ = cli(capsys, cache, "check", "--spec", str(spec), "--format", "json")
    assert code == 1 and json.loads(out)["matches"] is False

    # Lock again: check passes.
    assert cli(capsys, cache, "lock", "--spec", str(spec))[0] == 0
    assert cli(capsys, cache, "check", "--spec", str(spec))[0] == 0


def test_lock_path_override_and_bad_lock(tmp_path, cache, capsys) -> None:
    spec = copy_spec(tmp_path / "templates")
    lock = tmp_path / "elsewhere.json"
    assert cli(capsys, cache, "lock", "--spec", str(spec), "--lock", str(lock))[0] == 0
    assert lock.is_file() and not (spec / lockfile.LOCK_FILE).exists()
    assert cli(capsys, cache, "check", "--spec", str(spec), "--lock", str(lock))[0] == 0
    lock.write_text('{"format": 1, "variants": ', encoding="utf-8")
    code, _, err = cli(capsys, cache, "check", "--spec", str(spec), "--lock", str(lock))
    assert code == 2 and f"{lock}:1:" in one_error_line(err) and "promptspec lock" in err


def test_check_reports_moves_and_removed_variants(tmp_path, cache, capsys) -> None:
    spec = copy_spec(tmp_path / "templates")
    assert cli(capsys, cache, "lock", "--spec", str(spec))[0] == 0
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    text = with_layout(text)
    text = text.replace("    - model: harbor-4-legacy\n      mode: pair_programming\n", "    - model: harbor-4-legacy\n      mode: [pair_programming, plan]\n")
    (spec / "spec.yaml").write_text(text, encoding="utf-8")
    code, out, _ = cli(capsys, cache, "check", "--spec", str(spec))
    assert code == 1
    assert "review_checklist (moved)" in out
    assert "removed harbor-4-legacy/default/plan/read-only" in out


def test_embedded_spec_lock_is_committed_and_current(cache, capsys) -> None:
    """templates/prompts.lock.json must match the embedded spec: run `promptspec lock --spec templates` after editing it."""
    assert (TEMPLATES / lockfile.LOCK_FILE).is_file()
    code, out, _ = cli(capsys, cache, "check", "--spec", str(TEMPLATES))
    assert code == 0, out


# ---------------------------------------------------------------------------
# The API the site uses


def test_compare_api_for_the_site(repo, cache, expected) -> None:
    counter = TokenCounter(cache)
    base, head = run(repo["base"], counter=counter), run(repo["head"], counter=counter)
    diff = review.compare(base, head, base_label="main", head_label="this branch")
    assert diff.status_of(expected["added"][0]) == "added"
    assert diff.status_of(expected["changed"][0]) == "changed"
    assert diff.status_of(expected["unchanged"][0]) == "unchanged"
    assert diff.status_of("no/such/variant") == "unknown"
    vid = expected["realtime"][0]
    change = diff.variant(vid)
    assert change is not None and change.delta == expected["after"][vid] - expected["before"][vid]
    (section,) = [s for s in change.sections if s.fragment == "realtime"]
    assert section.before is not None and section.after is not None
    assert REALTIME_ADDITION in section.after.text and REALTIME_ADDITION not in section.before.text
    assert section.delta == section.after.tokens - section.before.tokens > 0
    assert diff.group(section.group_id).diff.startswith("--- base: section realtime")
    assert review.compare(base, base).is_empty
    # Same axes on both sides: variants are matched by id; the new mode is the one axis change.
    both = sorted(set(expected["changed"]) | set(expected["unchanged"]))
    assert diff.matched == tuple((v, v) for v in both) and all(diff.base_id(v) == v for v in both)
    assert [(a.axis, a.added, a.removed, a.axis_added, a.axis_removed) for a in diff.axis_changes] == [("mode", ("review",), (), False, False)]

    lock_data = json.loads(lockfile.dumps(lockfile.build(base)))
    ldiff = review.compare_to_lock(lock_data, head)
    assert not ldiff.matches
    assert sorted(c.id for c in ldiff.changed) == expected["changed"]
    assert sorted(a.id for a in ldiff.added) == expected["added"]
    assert ldiff.status_of(expected["unchanged"][0]) == "unchanged"
    assert {c.id: c.delta for c in ldiff.changed} == {c.id: c.delta for c in diff.changed}
    assert ldiff.matched == diff.matched
    assert review.compare_to_lock(lock_data, base).matches


def test_pre_commit_hooks_file() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"promptspec-check", "promptspec-lint"}
    for hook_id, entry in (("promptspec-check", "promptspec check"), ("promptspec-lint", "promptspec lint")):
        hook = by_id[hook_id]
        assert hook["entry"] == entry and hook["language"] == "python" and hook["pass_filenames"] is False
        assert re.match(hook["files"], "templates/fragments/apps.md") and not re.match(hook["files"], "generator/promptspec/cli.py")


def test_checkout_spec_for_other_callers(repo, cache) -> None:
    from promptspec.review import gitspec

    with gitspec.checkout_spec("HEAD~1", spec_dir=repo["spec"]) as source:
        assert source.commit and source.path.name == "templates"
        tmp = source.path
        base = gitspec.load_side("base", source, lambda p: run(p, counter=TokenCounter(cache)))
    assert not tmp.exists()
    head = run(repo["spec"], counter=TokenCounter(cache))
    assert len(review.compare(base, head).added) == 24
