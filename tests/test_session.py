"""pipeline.Session: after an edit, redo exactly the variants it can change,
and always end with what a fresh full build gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.assemble import export
from promptspec.errors import SpecError
from promptspec.measure.counter import TokenCounter

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = REPO / "templates"


@pytest.fixture
def spec_dir(tmp_path):
    """The embedded spec plus an approval_policy axis (whose texts are read
    with text() at render time) and two fragments sharing a nested include."""
    dest = tmp_path / "spec"
    shutil.copytree(TEMPLATES, dest)
    spec = yaml.safe_load((dest / "spec.yaml").read_text(encoding="utf-8"))
    spec["axes"]["approval_policy"] = ["on-request", "never"]
    (dest / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    approvals = dest / "permissions" / "approval"
    for name in ("on-request", "never"):
        if not (approvals / f"{name}.md").exists():
            (approvals / f"{name}.md").write_text(f"Approvals: `{name}`.\n", encoding="utf-8")
    parts = dest / "parts"
    parts.mkdir()
    (parts / "outer.md").write_text('Shared outer.\n{% include "parts/inner.md" %}', encoding="utf-8")
    (parts / "inner.md").write_text("Shared inner for {{ shell }}.\n", encoding="utf-8")
    (dest / "fragments" / "shared_a.md").write_text('\nA: {% include "parts/outer.md" %}', encoding="utf-8")
    (dest / "fragments" / "shared_b.md").write_text('\nB: {% include "parts/outer.md" %}', encoding="utf-8")
    for name, when in (("shared_a", {"mode": ["execute"]}), ("shared_b", {"mode": ["plan"]})):
        definition = {"role": "developer", "slot": "developer_extensions", "start": f"<{name}>", "end": f"</{name}>", "body": f"{name}.md", "when": when}
        (dest / "fragments" / f"{name}.yaml").write_text(yaml.safe_dump(definition, sort_keys=False), encoding="utf-8")
    return dest


@pytest.fixture
def counter(tmp_path):
    return TokenCounter(tmp_path / "token-cache")


def figures(result: pipeline.Result):
    return [
        (m.request.variant.id, export.text_view(m.request), m.base, m.sections, m.total, m.encoding)
        for m in result.measures
    ]


def edit(path: Path, change) -> None:
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")


def ids(variants) -> set[str]:
    return {v.id for v in variants}


def check(session: pipeline.Session, spec_dir: Path, counter) -> pipeline.Result:
    """Run the session and compare with a fresh full build."""
    result = session.run()
    fresh = pipeline.run(spec_dir, counter=counter)
    assert figures(result) == figures(fresh)
    return result


def test_redoes_only_the_variants_an_edit_can_change(spec_dir, counter):
    session = pipeline.Session(spec_dir, counter=counter)
    first = session.run()
    assert session.changes.full
    everything = ids(first.variants)

    def variants_where(**values):
        return {v.id for v in first.variants if all(v.value(a) == x for a, x in values.items())}

    # A fragment's own body file.
    edit(spec_dir / "fragments" / "realtime.md", lambda t: t + "Edited.\n")
    result = check(session, spec_dir, counter)
    assert not session.changes.full
    assert ids(session.changes.variants) == variants_where(mode="pair_programming")
    # Unchanged variants keep their request and measure objects.
    for old_m, new_m in zip(first.measures, result.measures):
        if old_m.request.variant not in session.changes.variants:
            assert new_m is old_m

    # A file read with text() at render time, for one value of an axis.
    edit(spec_dir / "permissions" / "approval" / "never.md", lambda t: t + "Never means never.\n")
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(approval_policy="never")

    # A mode's text, read through `mode.text` by the collaboration_mode fragment.
    edit(spec_dir / "modes" / "plan.md", lambda t: t + "\nPlan carefully.\n")
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(mode="plan")

    # A nested include shared by two fragments (Jinja loads it only once).
    edit(spec_dir / "parts" / "inner.md", lambda t: t.replace("Shared inner", "Changed inner"))
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(mode="plan") | variants_where(mode="execute")

    # A fragment definition: its variants before and after the edit.
    edit(spec_dir / "fragments" / "realtime.yaml", lambda t: t.replace("[pair_programming]", "[pair_programming, default]"))
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(mode="pair_programming") | variants_where(mode="default")

    # A new fragment, then removing it again.
    new = spec_dir / "fragments" / "late.yaml"
    new.write_text(yaml.safe_dump({"role": "user", "slot": "user_extensions", "text": "late\n", "when": {"mode": ["plan"]}}), encoding="utf-8")
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(mode="plan")
    new.unlink()
    check(session, spec_dir, counter)
    assert ids(session.changes.variants) == variants_where(mode="plan")

    # Files that can change every variant: a full rebuild.
    for rel in ("project/AGENTS.md", "models.json", "spec.yaml"):
        if rel == "models.json":
            edit(spec_dir / rel, lambda t: json.dumps(json.loads(t), indent=1))  # same models, new bytes
        else:
            edit(spec_dir / rel, lambda t: t + "\n# edited\n" if rel == "spec.yaml" else t + "\nMore rules.\n")
        check(session, spec_dir, counter)
        assert session.changes.full, rel
        assert ids(session.changes.variants) == everything


def test_nothing_redone_without_a_relevant_change(spec_dir, counter):
    session = pipeline.Session(spec_dir, counter=counter)
    first = session.run()
    assert session.run() is first
    assert session.changes.reason == "nothing changed"
    # Saving a file without changing it, or editing a file nothing reads.
    path = spec_dir / "fragments" / "realtime.md"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert session.run() is first
    (spec_dir / "NOTES.md").write_text("not part of any prompt\n", encoding="utf-8")
    result = check(session, spec_dir, counter)
    assert session.changes.variants == frozenset()
    assert all(a is b for a, b in zip(result.requests, first.requests))


def test_a_broken_edit_keeps_the_last_good_build(spec_dir, counter):
    session = pipeline.Session(spec_dir, counter=counter)
    first = session.run()
    path = spec_dir / "fragments" / "realtime.md"
    good = path.read_text(encoding="utf-8")
    path.write_text(good + "{% if %}\n", encoding="utf-8")
    with pytest.raises(SpecError):
        session.run()
    assert session.result is first
    path.write_text(good + "Fixed.\n", encoding="utf-8")
    check(session, spec_dir, counter)
    assert not session.changes.full


def test_timings_name_every_stage(spec_dir, counter):
    session = pipeline.Session(spec_dir, counter=counter)
    assert set(session.run().timings) == {"load", "assemble", "count"}
    edit(spec_dir / "fragments" / "realtime.md", lambda t: t + "x\n")
    assert set(session.run().timings) == {"check", "load", "assemble", "count"}
    line = pipeline.format_timings({"load": 0.01, "assemble": 0.5})
    assert line == "load 0.010 s · assemble 0.500 s · total 0.510 s"


def test_a_tool_edit_rebuilds_every_variant(tmp_path):
    """Tool files are not read by any render, so the session must treat them
    as global: a new description reaches every variant's tools and totals."""
    dest = tmp_path / "spec"
    shutil.copytree(TEMPLATES, dest)
    session = pipeline.Session(dest, counter=TokenCounter(tmp_path / "cache"))
    first = session.run()
    shell = dest / "tools" / "shell.yaml"
    shell.write_text(shell.read_text(encoding="utf-8").replace("Prefer one focused command per call;", "Prefer one focused, quick command per call;"), encoding="utf-8")
    second = session.run()
    assert session.changes.full and "tools/shell.yaml" in session.changes.reason
    fresh = pipeline.run(dest, counter=TokenCounter(tmp_path / "cache"))
    assert [export.responses_payload(r) for r in second.requests] == [export.responses_payload(r) for r in fresh.requests]
    assert [m.total for m in second.measures] == [m.total for m in fresh.measures] != [m.total for m in first.measures]


def _every_thread(result: pipeline.Result, requests) -> dict[tuple[str, str], list]:
    """Every request of every script from every variant, as sent (the explorer's
    set); `requests(spec, variant, script)` builds one thread."""
    from promptspec.spec.readers.scripts import read_script

    spec, out = result.spec, {}
    for name, ref in spec.conversations:
        path = spec.fs.resolve(ref, origin="spec.yaml")
        script = read_script(path, spec.fs.display(path))
        for v in result.variants:
            out[(name, v.id)] = [(t.step, t.kind, t.reason, t.new, export.responses_payload(t.request))
                                 for t in requests(spec, v, script)]
    return out


def threads(result: pipeline.Result) -> dict[tuple[str, str], list]:
    """Through the module's kept threads, as the site builds them."""
    from promptspec.assemble.conversation import conversation

    return _every_thread(result, conversation)


def fresh_threads(spec_dir: Path, counter) -> dict[tuple[str, str], list]:
    """The same from a fresh build, every thread built anew with an Assembler of
    its own (not the module's kept threads, which the session's spec keeps)."""
    from promptspec.assemble.conversation import Conversation

    result = pipeline.run(spec_dir, counter=counter)
    conv = Conversation(result.spec)
    return _every_thread(result, lambda spec, v, script: conv.requests(v, script))


@pytest.fixture
def embedded(tmp_path) -> Path:
    dest = tmp_path / "spec"
    shutil.copytree(TEMPLATES, dest)
    return dest


def test_serve_keeps_the_threads_an_edit_did_not_reach_and_no_other(embedded, counter):
    """assemble.conversation.carry_threads: after an edit a rebuild keeps the
    conversation threads nothing it changed was read by, and every thread,
    kept or built again, is what a fresh build of the edited spec gives."""
    from promptspec.assemble.conversation import forget_threads

    session = pipeline.Session(embedded, counter=counter)
    threads(session.run())
    total = len(session.result.variants) * len(session.result.spec.conversations)
    kept: dict[str, int] = {}
    try:
        for rel, change in (
            ("modes/plan.md", lambda t: t + "\nPlan carefully.\n"),  # some variants and the threads through them
            ("skills/release-notes/SKILL.md", lambda t: t + "\nList breaking changes first.\n"),  # later requests only
            ("fragments/compact_prompt.md", lambda t: t + "\nKeep file names.\n"),  # compaction requests only
            ("conversations/mode-switch.yaml", lambda t: t + "# a comment: the same script\n"),
            ("fragments/compact_summary.yaml", lambda t: t.replace("role:", "glue_ok: true\nrole:", 1)),  # a definition
        ):
            edit(embedded / rel, change)
            result = session.run()
            assert not session.changes.full, rel
            kept[rel] = session.changes.threads_kept
            assert threads(result) == fresh_threads(embedded, counter), rel  # every thread kept again, as a rebuild's pages do
    finally:
        forget_threads()
    assert 0 < kept["modes/plan.md"] < total
    assert 0 < kept["skills/release-notes/SKILL.md"] < total and 0 < kept["fragments/compact_prompt.md"] < total
    assert kept["conversations/mode-switch.yaml"] == total
    assert kept["fragments/compact_summary.yaml"] == 0


def test_a_kept_thread_sees_an_edit_of_a_root_outside_the_spec_folder(embedded, tmp_path, counter):
    """A file from a root outside the spec folder that only later requests
    read is hashed by nobody: editing it starts no rebuild, and the next
    rebuild (another edit) keeps no thread that read its old text."""
    from promptspec.assemble.conversation import forget_threads

    team = tmp_path / "team"
    team.mkdir()
    skill = embedded / "skills" / "release-notes" / "SKILL.md"
    (team / "SKILL.md").write_text(skill.read_text(encoding="utf-8"), encoding="utf-8")
    edit(embedded / "spec.yaml", lambda t: t.replace("release-notes: skills/release-notes/SKILL.md", "release-notes: '@team/SKILL.md'")
         + "\nroots:\n  team: ../team\n")
    session = pipeline.Session(embedded, counter=counter)
    try:
        threads(session.run())
        edit(team / "SKILL.md", lambda t: t + "\nName the release in the title.\n")
        assert session.run() is session.result  # not a file the session hashes
        edit(embedded / "personalities" / "pragmatic.md", lambda t: t + "\nBe brief.\n")
        result = session.run()
        assert 0 < session.changes.threads_kept  # the threads through neither file
        after = threads(result)
        assert after == fresh_threads(embedded, counter)
        shown = [key for key, thread in after.items() if "Name the release in the title." in json.dumps(thread)]
        assert shown and any("pragmatic" not in variant for _, variant in shown)
    finally:
        forget_threads()
