"""`promptspec history`: a release series of a spec, step by step.

The series is a scratch git repository with three tags (history_repo.py):
v1 → v2 edits a fragment and adds a mode, v2 → v3 removes a model and moves a
section into another message.  Expectations are computed independently: each
tag's spec is assembled and every text of every request counted again, so the
per-variant Δ the history reports is checked against a recount of both sides.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptspec.assemble import export
from promptspec.assemble.builder import Assembler
from promptspec.assemble.matrix import matrix
from promptspec.cli import main
from promptspec.errors import UsageError
from promptspec.measure.counter import TokenCounter
from promptspec.measure.encodings import encoding_for_model
from promptspec.review import gitspec, lockfile, reach, sides
from promptspec.review.history import compare as history
from promptspec.review.history import releases
from promptspec.review.lockfile import INSTRUCTIONS
from promptspec.review.history.releases import Part, Release, VariantSnap
from promptspec.spec.readers.load import load_spec

from _helpers import TEMPLATES
from history_repo import REALTIME_LINE, make_repo


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("history-token-cache")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("history-repo") / "repo")


def recount(spec_dir: Path) -> dict[str, int]:
    """Total tokens per variant from the payload's texts, with a counter of its own (no cache)."""
    spec = load_spec(spec_dir)
    asm = Assembler(spec)
    counter = TokenCounter(persist=False)
    out = {}
    for v in matrix(spec):
        payload = export.responses_payload(asm.assemble(v))
        enc = encoding_for_model(payload["model"], spec.encodings)
        messages = [item for item in payload["input"] if item["type"] == "message"]
        texts = [payload.get("instructions", "")] + [part["text"] for msg in messages for part in msg["content"]]
        # Tools: the list as the body carries it (the field or an additional_tools item), compact JSON.
        tools = payload.get("tools") or [t for item in payload["input"] if item["type"] == "additional_tools" for t in item["tools"]]
        if tools:
            texts.append(json.dumps(tools, ensure_ascii=False, separators=(",", ":")))
        out[v.id] = sum(counter.count(t, enc) for t in texts if t)
    return out


@pytest.fixture(scope="module")
def totals(repo: Path) -> dict[str, dict[str, int]]:
    out = {}
    for tag in ("v1", "v2", "v3"):
        with gitspec.checkout_spec(tag, spec_dir=repo) as source:
            out[tag] = recount(source.path)
    return out


def cli(capsys, cache: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(cache), *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def data(repo: Path, cache: Path) -> dict:
    # Not through capsys (module scope): call the formatter on the same series the CLI reads.
    from promptspec.review.history import report as history_report
    from promptspec.review.history import series

    rels = series.load_series(sides.parse_sides(["v1", "v2,label=two", "v3,date=2026-07-01"]), spec_dir=repo, counter=TokenCounter(cache))
    return json.loads(history_report.to_json(history.build_history(rels)))


# ---------------------------------------------------------------------------
# The three-tag series


def test_releases_carry_labels_and_dates(data: dict, totals: dict) -> None:
    rel = data["releases"]
    assert [r["label"] for r in rel] == ["v1", "two", "v3"]
    assert [r["date"] for r in rel] == ["2026-01-05", "2026-03-10", "2026-07-01"]  # commit dates unless given
    assert [r["variants"] for r in rel] == [len(totals[t]) for t in ("v1", "v2", "v3")]
    assert all(len(r["commit"]) == 40 for r in rel)


def test_step_one_lists_the_new_mode_and_the_fragment_change(data: dict, totals: dict) -> None:
    step = data["steps"][0]
    assert (step["base"], step["head"]) == ("v1", "two")
    mode = next(a for a in step["axes"] if a["axis"] == "mode")
    assert mode["added"] == ["review"] and mode["removed"] == []
    added = sorted(v for v in totals["v2"] if v not in totals["v1"])
    assert sorted(step["variants"]["added"]) == added and all(v.split("/")[2] == "review" for v in added)
    assert step["variants"]["added_reach"]["text"] == "mode = review (all models)"
    [change] = step["changes"]
    assert change["kind"] == "changed" and change["name_after"] == "realtime"
    assert change["reach"]["text"] == "mode = pair_programming (all models)"
    assert sorted(change["variants"]) == sorted(v for v in totals["v1"] if v.split("/")[2] == "pair_programming")
    assert "+" + REALTIME_LINE in change["diff"]


def test_step_two_lists_the_removed_model_and_the_move(data: dict, totals: dict) -> None:
    step = data["steps"][1]
    model = next(a for a in step["axes"] if a["axis"] == "model")
    assert model["removed"] == ["harbor-4-legacy"] and model["added"] == []
    assert sorted(step["variants"]["removed"]) == sorted(v for v in totals["v2"] if v.startswith("harbor-4-legacy/"))
    assert step["variants"]["removed_reach"]["text"] == "model = harbor-4-legacy"
    moves = [c for c in step["changes"] if c["kind"] == "moved"]
    assert [(c["name_after"], c["place_before"], c["place_after"]) for c in moves] == [("open_files", "user", "developer")]
    assert moves[0]["diff"] == "" and moves[0]["delta_min"] == moves[0]["delta_max"] == 0
    assert sorted(moves[0]["variants"]) == sorted(totals["v3"])  # every variant sends open_files
    # The shell tool's edit: one change per place the models send tools (the tools field, an input item).
    tools = [c for c in step["changes"] if c["name_after"] == "tool:shell"]
    assert sorted(c["place_after"] for c in tools) == ["tools", "tools_input"]
    assert sorted(v for c in tools for v in c["variants"]) == sorted(totals["v3"])
    for c in tools:
        assert c["kind"] == "changed" and c["title"] == "tool shell changed" and c["delta_max"] > 0
        assert "never run interactive programs" in c["diff"]


def test_per_variant_delta_equals_a_recount_of_both_sides(data: dict, totals: dict) -> None:
    for step, (a, b) in zip(data["steps"], (("v1", "v2"), ("v2", "v3"))):
        per = step["tokens"]["per_variant"]
        assert per, "no variant was matched"
        assert sorted(d["id"] for d in per) == sorted(set(totals[a]) & set(totals[b]))
        for d in per:
            assert (d["before"], d["after"]) == (totals[a][d["base_id"]], totals[b][d["id"]]), d["id"]
        deltas = sorted(totals[b][d["id"]] - totals[a][d["id"]] for d in per)
        assert (step["tokens"]["delta_min"], step["tokens"]["delta_max"]) == (deltas[0], deltas[-1])
    assert data["steps"][0]["tokens"]["delta_max"] > 0


def test_cli_formats_list_changes_values_and_moves(repo: Path, cache: Path, capsys) -> None:
    code, text, err = cli(capsys, cache, "history", "v1", "v2", "v3", "--spec", str(repo))
    assert code == 0, err
    assert "== step 1: v1 → v2" in text and "== step 2: v2 → v3" in text
    assert "mode: review added in v2" in text
    assert "model: harbor-4-legacy gone in v3" in text
    assert "fragment realtime changed" in text and "in mode = pair_programming (all models)" in text
    assert "fragment open_files moved (user message → developer message)" in text
    assert "tool shell changed" in text
    assert "+" + REALTIME_LINE in text
    code, md, err = cli(capsys, cache, "history", "v1", "v2", "v3", "--spec", str(repo), "--format", "markdown")
    assert code == 0, err
    assert md.startswith("# Prompt history") and "## v1 → v2" in md and "## v2 → v3" in md
    assert "harbor-4-legacy gone in v3" in md and "review added in v2" in md
    assert "open_files moved" in md and "```diff" in md  # readable: no entity for an underscore inside a word
    code, js, err = cli(capsys, cache, "history", "v1", "v3", "--spec", str(repo), "--format", "json")
    assert code == 0, err
    step = json.loads(js)["steps"][0]
    kinds = {(c["kind"], c["name_after"] or c["name_before"]) for c in step["changes"]}
    assert {("changed", "realtime"), ("moved", "open_files")} <= kinds


def test_lock_and_folder_sides(repo: Path, cache: Path, capsys, tmp_path: Path, totals: dict) -> None:
    with gitspec.checkout_spec("v1", spec_dir=repo) as source:
        from promptspec import pipeline

        lock = tmp_path / "v1.lock.json"
        lockfile.write(lock, lockfile.build(pipeline.run(source.path, counter=TokenCounter(cache))))
    code, out, err = cli(capsys, cache, "history", f"lock:{lock},label=one", f"dir:{repo}", "--spec", str(repo), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["kind"] for r in doc["releases"]] == ["lock", "spec"]
    step = doc["steps"][0]
    realtime = next(c for c in step["changes"] if c["name_after"] == "realtime")
    assert realtime["diff"] == ""  # a lock has no text
    assert any(c["kind"] == "moved" and c["name_after"] == "open_files" for c in step["changes"])
    for d in step["tokens"]["per_variant"]:
        assert (d["before"], d["after"]) == (totals["v1"][d["base_id"]], totals["v3"][d["id"]])


def test_a_folder_is_never_guessed_from_a_bare_argument(repo: Path, cache: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(repo.parent)
    (repo.parent / "v1").mkdir(exist_ok=True)  # a folder named like the tag
    (repo.parent / "v1" / "spec.yaml").write_text("name: fake\n", encoding="utf-8")
    code, out, err = cli(capsys, cache, "history", "v1", "v2", "--spec", str(repo))
    assert code == 2 and "'v1' is ambiguous" in err and "rev:v1" in err and err.count("\n") == 1
    code, out, err = cli(capsys, cache, "history", "rev:v1", "v2", "--spec", str(repo), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["releases"][0]["commit"]
    code, out, err = cli(capsys, cache, "history", "./templates,label=here", "v2", "--spec", str(repo), "--format", "json")
    assert code == 0, err
    assert [r["kind"] for r in json.loads(out)["releases"]] == ["spec", "spec"]
    code, out, err = cli(capsys, cache, "history", "no-such", "v2", "--spec", str(repo))
    assert code == 2 and "unknown git revision 'no-such'" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["v1"], "at least two"),
    (["v1", "nope"], "unknown git revision 'nope'"),
    (["v1", "dir:/nonexistent/x"], "is not a spec folder"),
    (["v1", "lock:/nonexistent/x.json"], "no lock file"),
    (["v1", "v1"], "both named 'v1'"),
    (["v1", "v2,date=yesterday"], "is not an ISO date"),
    (["v1", "HEAD:templates"], "is not a git revision"),
])
def test_bad_sides_are_one_line_errors(repo: Path, cache: Path, capsys, argv, message) -> None:
    code, out, err = cli(capsys, cache, "history", *argv, "--spec", str(repo))
    assert code == 2 and out == ""
    assert err.startswith("promptspec: error: ") and message in err and err.count("\n") == 1


# ---------------------------------------------------------------------------
# Pure parts


def test_side_syntax() -> None:
    s = sides.parse_side("dir:specs/0.150.0,label=0.150.0,date=2026-10-02")
    assert (s.kind, s.ref, s.label, s.date, s.name) == ("dir", "specs/0.150.0", "0.150.0", "2026-10-02", "0.150.0")
    assert sides.parse_side("lock:a.json").kind == "lock"
    assert sides.parse_side("rev:origin/main").ref == "origin/main"
    assert sides.parse_side("v1.2").kind == "rev"
    assert sides.parse_side("./old").kind == sides.parse_side("/abs/old").kind == "dir"
    assert sides.parse_side("rev:./x").kind == "rev"  # an explicit prefix wins over the path-like form
    assert sides.parse_side(s.written()) == s
    with pytest.raises(UsageError):
        sides.parse_side("dir:")


def _release(label: str, variants: dict[str, tuple[tuple[tuple[str, str], ...], tuple[Part, ...]]],
             refused: dict | None = None) -> Release:
    axes: dict[str, list[str]] = {}
    snaps = {}
    for vid, (values, parts) in variants.items():
        for a, v in values:
            axes.setdefault(a, [])
            if v not in axes[a]:
                axes[a].append(v)
        total = sum(p.tokens for p in parts)
        snaps[vid] = VariantSnap(vid, values, values[0][1], "o200k_base", total, None, "|".join(f"{p.name}@{p.place}:{p.sha}" for p in parts), parts)
    return Release(label, None, label, None, "spec", tuple((a, tuple(v)) for a, v in axes.items()), refused or {}, None, snaps)


def _part(name: str, place: str, pos: int, text: str, tokens: int, marker: str = "") -> Part:
    return Part(name, place, pos, releases._sha(text), tokens, marker, text, f"{name}.md")


BASE = "You are a coding agent.\n\n# How you work\nRead before you write. Keep changes small and focused on the request.\n"


def test_instructions_moving_into_a_developer_message_is_a_move() -> None:
    vals = (("model", "m"), ("personality", "default"), ("mode", "default"))
    a = _release("0.125.0", {"m/default/default": (vals, (_part(INSTRUCTIONS, "instructions", 0, BASE, 20),
                                                           _part("permissions", "developer", 1, "<p>x</p>", 3, "<p>")))})
    b = _release("0.150.0", {"m/default/default": (vals, (_part("base_instructions", "developer", 1, BASE, 20),
                                                           _part("permissions", "developer", 2, "<p>x</p>", 3, "<p>")))})
    c = _release("0.169.0", {"m/default/default": (vals, (_part("base_instructions", "developer", 1, BASE + "Say what you verified.\n", 25),
                                                           _part("permissions", "developer", 2, "<p>x</p>", 3, "<p>")))})
    step1, step2 = history.build_history([a, b, c]).steps
    [move] = step1.changes
    assert (move.kind, move.name_before, move.name_after, move.place_before, move.place_after, move.how) == (
        "moved", INSTRUCTIONS, "base_instructions", "instructions", "developer", "same text")
    assert move.diff == ""
    [change] = step2.changes
    assert change.kind == "changed" and "+Say what you verified." in change.diff
    # Moved *and* changed: matched by similar text.
    step = history.compare_releases(a, c)
    assert [(ch.kind, ch.how) for ch in step.changes] == [("moved", "similar text")] and "+Say what you verified." in step.changes[0].diff


def test_a_part_renamed_in_its_place_is_one_renamed_change_of_the_steps_diff() -> None:
    vals = (("model", "m"), ("personality", "default"), ("mode", "default"))
    a = _release("1", {"m/default/default": (vals, (_part("perms", "developer", 1, "<permissions>\nread only\n", 6, "<permissions>"),))})
    b = _release("2", {"m/default/default": (vals, (_part("permissions", "developer", 1, "<permissions>\nread and write\n", 8, "<permissions>"),))})
    step = history.compare_releases(a, b)
    [group] = step.diff.groups
    assert (group.kind, group.name_before, group.name_after, group.how) == ("renamed", "perms", "permissions", "same marker")
    assert (group.place_before, group.place_after, group.delta_range) == ("developer", "developer", (2, 2))
    assert "+read and write" in group.diff
    # The variant's own change names the group and both sides' parts.
    [variant] = step.diff.changed
    [section] = variant.sections
    assert (section.kind, section.group_id, section.before.fragment, section.after.fragment, section.delta) == (  # type: ignore[union-attr]
        "renamed", group.id, "perms", "permissions", 2)
    from promptspec.review.history.report import change_title

    assert change_title(group) == "fragment perms → fragment permissions renamed and changed"


def test_values_that_come_and_go_and_refused_values_are_listed() -> None:
    def variants(approvals: list[str]) -> dict:
        return {f"m/default/default/{ap}": ((("model", "m"), ("personality", "default"), ("mode", "default"), ("approval_policy", ap)),
                                            (_part("permissions", "developer", 1, f"<p>{ap}</p>", 3),)) for ap in approvals}

    a = _release("0.125.0", variants(["untrusted", "on-request"]))
    b = _release("0.150.0", variants(["on-request", "never"]),
                 refused={"approval_policy": {"untrusted": "approval_policy = \"untrusted\" is no longer supported"}})
    step = history.compare_releases(a, b)
    [ax] = step.axes
    assert (ax.added, ax.removed) == (("never",), ("untrusted",))
    assert ax.refused == (("untrusted", 'approval_policy = "untrusted" is no longer supported'),)
    from promptspec.review.history.report import axis_lines

    lines = axis_lines(step)
    assert "approval_policy: never added in 0.150.0" in lines
    assert any(line.startswith("approval_policy: untrusted gone in 0.150.0") and "no longer supported" in line for line in lines)
    assert step.added == ("m/default/default/never",) and step.removed == ("m/default/default/untrusted",)


def test_a_new_axis_compares_each_new_variant_with_its_predecessor() -> None:
    old = _release("1", {"m/default/default": ((("model", "m"), ("personality", "default"), ("mode", "default")),
                                               (_part("a", "developer", 1, "A", 5),))})
    new = _release("2", {f"m/default/default/{s}": ((("model", "m"), ("personality", "default"), ("mode", "default"), ("sandbox", s)),
                                                    (_part("a", "developer", 1, "A", 5), _part("sb", "developer", 2, s, n)))
                         for s, n in (("ro", 2), ("rw", 4))})
    step = history.compare_releases(old, new)
    assert step.axes[0].axis == "sandbox" and step.axes[0].axis_added
    assert sorted((bid, hid, after - before) for hid, bid, before, after in step.totals()) == [
        ("m/default/default", "m/default/default/ro", 2), ("m/default/default", "m/default/default/rw", 4)]
    # The step's comparison is change.py's Diff: the pairs matched across the new axis, their changes in it.
    assert step.diff.matched == (("m/default/default", "m/default/default/ro"), ("m/default/default", "m/default/default/rw"))
    assert [(c.id, step.diff.base_id(c.id), c.delta) for c in step.diff.changed] == [
        ("m/default/default/ro", "m/default/default", 2), ("m/default/default/rw", "m/default/default", 4)]
    assert [(s.fragment, s.kind) for s in step.diff.changed[0].sections] == [("sb", "added")]
    assert step.added == () and step.removed == ()


def test_reach_summaries_use_axis_rules_and_ids_only_as_a_fallback() -> None:
    spec = load_spec(TEMPLATES)
    universe = reach.Universe({v.id: v.values for v in matrix(spec)})
    ids = list(universe.ids)
    plan = [v for v in ids if v.split("/")[2] == "plan"]
    assert reach.summarise(plan, universe).text() == "mode = plan (all models)"
    assert reach.summarise(ids, universe).text() == f"all {len(ids)} variants"
    two = [v for v in plan if v.startswith("harbor-5/")] + [v for v in ids if v.split("/")[2] == "execute"]
    assert reach.summarise(two, universe).text() == "mode = execute (all models); model = harbor-5, mode = plan"
    odd = [ids[0], ids[7]]
    assert reach.summarise(odd, universe).text() == f"2 variants: {ids[0]}, {ids[7]}"


def test_revisions_are_kept_on_disk_and_a_damaged_copy_is_ignored(repo: Path, tmp_path: Path, monkeypatch) -> None:
    from promptspec import pipeline
    from promptspec.review.history import report as history_report
    from promptspec.review.history import release_cache
    from promptspec.review.history import series

    runs = []
    real_run = pipeline.run
    monkeypatch.setattr(pipeline, "run", lambda *a, **k: runs.append(a[0]) or real_run(*a, **k))

    counter = TokenCounter(tmp_path / "cache")
    parsed = sides.parse_sides(["v1", "v2", "v3"])
    first = history_report.to_json(history.build_history(series.load_series(parsed, spec_dir=repo, counter=counter)))
    stored = sorted((tmp_path / "cache" / release_cache.FOLDER).glob("*.json"))
    assert len(stored) == 3
    again = history_report.to_json(history.build_history(series.load_series(parsed, spec_dir=repo, counter=TokenCounter(tmp_path / "cache"))))
    assert again == first
    assert len(runs) == 3  # the second history assembled nothing
    # An edited count with a stale digest is not used: the release is made again, with the true figures.
    raw = stored[0].read_bytes()
    head, _, body = raw.partition(b"\n")
    data = json.loads(body)
    data["variants"][0][4] += 1000
    stored[0].write_bytes(head + b"\n" + json.dumps(data).encode())
    assert history_report.to_json(history.build_history(series.load_series(parsed, spec_dir=repo, counter=TokenCounter(tmp_path / "cache")))) == first
    assert len(runs) == 4  # only the damaged one was made again
    # Loading from a stored release gives the same Release as building it.
    k = release_cache.key(gitspec.resolve_commit(repo.parent, "v2"), "templates")
    loaded = release_cache.load(tmp_path / "cache", k, label="v2", date="2026-03-10", written="v2")
    built = series.load_series(sides.parse_sides(["v1", "v2"]), spec_dir=repo, counter=TokenCounter(persist=False))[1]
    assert loaded == built


def test_an_old_lock_without_axes_takes_the_names_of_a_neighbour() -> None:
    data = {"format": 1, "variants": {"m/default/plan/ro": {"sha256": "x", "tokens": {"total": 5}, "sections": {}}}}
    rel = releases.from_lock(data, label="old", axis_names=("model", "personality", "mode", "sandbox"))
    assert rel.axis_names == ("model", "personality", "mode", "sandbox")
    assert releases.from_lock(data, label="old").axis_names == ("model", "personality", "mode", "axis4")
    data["axes"] = [{"name": n, "values": []} for n in ("model", "personality", "mode", "sandbox_mode")]
    assert releases.from_lock(data, label="old", axis_names=("a", "b", "c", "d")).axis_names[3] == "sandbox_mode"


def test_reach_finds_one_rule_over_several_axes_and_says_what_is_left_out() -> None:
    universe = {f"{m}/{s}/{a}": (("model", m), ("sandbox", s), ("approval", a))
                for m in ("m1", "m2", "m3", "m4", "m5") for s in ("ro", "rw", "full") for a in ("ask", "never")}
    # One sandbox and one approval value, for every model but one: a product over three axes.
    ids = [v for v in universe if v.endswith("/full/never") and not v.startswith("m5/")]
    assert reach.summarise(ids, universe).text() == "model ≠ m5, sandbox = full, approval = never"
    # Cells on two axes that share a value merge into one rule.
    ids = [v for v in universe if v.split("/")[1] == "ro" and v.split("/")[0] in ("m1", "m2")] + \
          [v for v in universe if v.split("/")[2] == "never" and v.split("/")[1] == "rw"]
    assert reach.summarise(ids, universe).text() == "sandbox = rw, approval = never (all models); model ∈ {m1, m2}, sandbox = ro"


def test_rewritten_base_instructions_moving_into_a_message_are_still_one_move() -> None:
    vals = (("model", "m"), ("personality", "default"), ("mode", "default"))
    field = Part(INSTRUCTIONS, "instructions", 0, releases._sha(BASE), 20, "", BASE, "models.json", True)
    rewritten = "Entirely new wording of the agent's instructions.\n"
    section = Part("base_instructions", "developer", 1, releases._sha(rewritten), 9, "", rewritten, "fragments/base_instructions.yaml", True)
    other = Part("notes", "developer", 2, releases._sha(rewritten + "x"), 9, "", rewritten + "x", "fragments/notes.yaml")
    a = _release("1", {"m/default/default": (vals, (field,))})
    b = _release("2", {"m/default/default": (vals, (section, other))})
    step = history.compare_releases(a, b)
    assert sorted((c.kind, c.name_before, c.name_after, c.how) for c in step.changes) == [
        ("added", None, "notes", ""), ("moved", INSTRUCTIONS, "base_instructions", "base instructions")]


def test_a_release_knows_which_section_carries_the_base_instructions(tmp_path: Path) -> None:
    import shutil

    from promptspec import pipeline

    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    # A section that repeats the instructions inside other text (as a model-switch wrapper does).
    (spec / "fragments" / "echo.yaml").write_text(
        "role: developer\nslot: developer_extensions\nstart: '<echo>'\nend: '</echo>'\ntext: |\n  Repeated:\n  {{ base.text }}\n",
        encoding="utf-8")
    rel = releases.from_result(pipeline.run(spec, counter=TokenCounter(persist=False)), label="x")
    snap = rel.variants["harbor-5-mini/default/default/workspace-write"]
    carriers = [p.name for p in snap.parts if p.is_base]
    assert carriers == [INSTRUCTIONS]  # echo repeats the instructions inside other text: not a carrier
    assert any(p.name == "echo" for p in snap.parts)


def test_a_cache_folder_inside_the_repository_is_not_used_for_releases(repo: Path) -> None:
    from promptspec.review.history import release_cache
    from promptspec.review.history import series

    inside = repo.parent / ".cache-in-repo"
    series.load_series(sides.parse_sides(["v1", "v2"]), spec_dir=repo, counter=TokenCounter(inside))
    assert (inside / "token-counts.sqlite3").is_file()  # the token cache itself is there
    assert not (inside / release_cache.FOLDER).exists()


def test_sections_over_budget_and_compaction_crossings_are_reported() -> None:
    import dataclasses

    vals = (("model", "m"), ("personality", "default"), ("mode", "default"))
    small = _part("big", "developer", 1, "short", 50)
    large = _part("big", "developer", 1, "long " * 400, 2500)
    a = dataclasses.replace(_release("1", {"m/default/default": (vals, (small,))}), budget=2000)
    b = dataclasses.replace(_release("2", {"m/default/default": (vals, (large,))}), budget=2000)
    a = dataclasses.replace(a, variants={k: dataclasses.replace(v, headroom=100) for k, v in a.variants.items()})
    b = dataclasses.replace(b, variants={k: dataclasses.replace(v, headroom=-2350) for k, v in b.variants.items()})
    step = history.compare_releases(a, b)
    [over] = step.over_budget
    assert (over.fragment, over.max_tokens, over.variants, over.new) == ("big", 2500, 1, True)
    assert step.headroom_crossings() == [("m/default/default", 100, -2350)]
    from promptspec.review.history.report import to_text

    text = to_text(history.History((a, b), (step,)))
    assert "over budget: big up to 2500 tokens > 2000 in 1 variants (new)" in text
    assert "past auto-compaction: m/default/default headroom 100 -> -2350" in text


def test_a_release_that_does_not_load_is_one_line_naming_it(repo: Path, cache: Path, capsys, tmp_path: Path) -> None:
    import shutil
    import subprocess

    copy = tmp_path / "repo"
    shutil.copytree(repo.parent, copy, symlinks=True)
    spec = copy / "templates" / "spec.yaml"
    spec.write_text(spec.read_text(encoding="utf-8") + "layuot: {}\n", encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(copy), "commit", "-qam", "broken"], check=True, env=env)
    subprocess.run(["git", "-C", str(copy), "tag", "v4"], check=True, env=env)
    code, out, err = cli(capsys, cache, "history", "v3", "v4", "--spec", str(copy / "templates"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("promptspec: error: side 2 (v4 (") and "unknown key 'layuot'" in err
    assert "promptspec-history-" not in err  # the temporary folder is not shown


def test_markdown_fits_a_comment(repo: Path, cache: Path, capsys) -> None:
    """`history --format markdown --max-chars N`: never longer than N; the
    release table, then every step's summary (its counts alone where it does
    not fit), then diffs, and a note naming what was cut; uncut, the same
    text as without a cap."""
    from promptspec.review.history import report as history_report
    from promptspec.review.history import series
    from promptspec.review.report import MIN_MARKDOWN_CHARS

    hist = history.build_history(series.load_series(sides.parse_sides(["v1", "v2", "v3"]), spec_dir=repo, counter=TokenCounter(cache)))
    whole = history_report.to_markdown(hist)
    assert history_report.to_markdown(hist, max_chars=len(whole) + history_report.CUT_NOTE_RESERVE) == whole
    assert ":scissors:" not in whole and whole.count("<details>") >= 3

    tight = history_report.to_markdown(hist, max_chars=MIN_MARKDOWN_CHARS, command="promptspec history v1 v2 v3")
    assert len(tight) <= MIN_MARKDOWN_CHARS and tight.startswith("# Prompt history")
    assert "| v1 |" in tight and "| v3 |" in tight and "## v1 → v2" in tight and "## v2 → v3" in tight
    assert "**Variants:**" in tight and "Cut to fit 2000 characters: " in tight
    assert tight.count("<details>") < whole.count("<details>")
    assert "Run `promptspec history v1 v2 v3 --format markdown --out FILE` for everything" in tight  # a command to copy, in a code span

    # Room for both summaries and the first diff only.
    blocks = [history_report._diff_block(c) for s in hist.steps for c in s.changes if c.diff]
    cap = len(whole) - sum(map(len, blocks)) + len(blocks[0]) + history_report.CUT_NOTE_RESERVE
    middle = history_report.to_markdown(hist, max_chars=cap)
    assert len(middle) <= cap and middle.count("<details>") == 1 and blocks[0] in middle
    assert middle.count("**Largest increases**") == whole.count("**Largest increases**") > 0
    left = [(n, i + 1) for i, s in enumerate(hist.steps) if (n := sum(1 for c in s.changes if c.diff) - (i == 0))]
    listed = ", ".join(f"{n} diff{'s' if n > 1 else ''} of step {i}" for n, i in left)
    assert f"Cut to fit {cap} characters: {listed}. Run this history with --out FILE" in middle, middle[-300:]

    code, _, err = cli(capsys, cache, "history", "v1", "v2", "--spec", str(repo), "--format", "markdown", "--max-chars", "100")
    assert code == 2 and f"--max-chars must be at least {MIN_MARKDOWN_CHARS}" in err
    code, md, err = cli(capsys, cache, "history", "v1", "v2", "v3", "--spec", str(repo), "--format", "markdown", "--max-chars", "2000")
    assert code == 0 and md == tight


def test_markdown_to_a_file_is_whole_and_reads_as_text(repo: Path, cache: Path, capsys, tmp_path) -> None:
    """`--out FILE` writes the whole history (no cap unless asked for), escaped
    only where GitHub would act: names keep their underscores, nothing is an
    entity but `<`, `&`, `@` and `#1`."""
    import re

    out = tmp_path / "history.md"
    code, printed, err = cli(capsys, cache, "history", "v1", "v2", "v3", "--spec", str(repo), "--format", "markdown", "--out", str(out))
    assert code == 0, err
    assert f"wrote {out}" in printed
    md = out.read_text(encoding="utf-8")
    code, capped, _ = cli(capsys, cache, "history", "v1", "v2", "v3", "--spec", str(repo), "--format", "markdown", "--max-chars", "2000")
    assert ":scissors:" not in md and len(md) > len(capped)
    assert "open_files" in md and "&#95;" not in md and "&#40;" not in md and "&#58;" not in md
    assert set(re.findall(r"&#?\w+;", md)) <= {"&lt;", "&amp;", "&#91;", "&#93;", "&#8203;"}


def test_md_text_is_inert_on_github_and_light() -> None:
    """As inert as md_escape (live_elements finds nothing), with far fewer escapes."""
    from promptspec.util.gh_markdown import live_elements, md_escape, md_span, md_text

    plain = "exec_command: model (all models) = x"
    assert md_text(plain) == plain
    hostile = "<script> *x* _y_ [l](u) @team #1 a|b `c` $m$ ~~s~~ &amp; https://x.example www.y.example GH-12 :smile:"
    light = md_text(hostile)
    assert live_elements(light) == [] and live_elements(md_escape(hostile)) == []
    assert light.count("&#") < md_escape(hostile).count("&#") / 2
    assert md_span("a|b") == r"`a\|b`" and md_span("x`y") == "<code>x&#96;y</code>" and md_span("@team").startswith("<code>")
