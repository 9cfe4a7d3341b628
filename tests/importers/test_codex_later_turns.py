"""Later turns of a released Codex: capture its standard threads, learn them
into the imported spec (`import-codex --cli --later-turns`), and check every
request of every thread with `verify --cli --threads`.

The pinned release comes from npm at test time (tests/codex_release.py);
Codex's text is only ever in tmp_path.  Two models keep it to a few minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from promptspec.cli import main
from promptspec.importers.codex_cli import import_cli
from promptspec.oracle import binary as _binary
from promptspec.oracle.capture import Config, debug_models
from promptspec.oracle.scratch import make_scratch, remove_scratch
from promptspec.oracle.thread import ThreadStep, Thread, capture_threads

MODEL = "gpt-5.4"
OTHER = "gpt-5.4-mini"  # a second model, so that a model switch stays inside the spec

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def imported(codex, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("later") / "spec"
    return import_cli(codex, out, models=(MODEL, OTHER), later_turns=True)


def test_the_recorder_reports_the_usage_that_triggers_auto_compaction(codex):
    codex_bin = _binary.identify(codex)
    scratch = make_scratch()
    try:
        catalog = debug_models(codex_bin, scratch)
        entry = next(m for m in catalog["models"] if m["slug"] == MODEL)
        limit = entry.get("auto_compact_token_limit") or entry["context_window"] * 9 // 10
        cfg = Config(MODEL)
        threads = [Thread("at", cfg, (ThreadStep("hello", usage=limit), ThreadStep("again"))),
                   Thread("below", cfg, (ThreadStep("hello", usage=limit - 1), ThreadStep("again")))]
        at, below = list(capture_threads(codex_bin, scratch, threads))
    finally:
        remove_scratch(scratch)
    assert len(at.bodies) == 3 and len(below.bodies) == 2
    # The middle request of the compacting thread is the compaction: no tools, the history plus one prompt.
    assert at.bodies[1]["tools"] == [] and at.bodies[1]["input"][:len(at.bodies[0]["input"])] == at.bodies[0]["input"]


def test_import_learns_later_turns_and_reproduces_every_thread(imported):
    spec_dir, stats = imported
    assert stats["threads"] >= 20 and stats["thread_requests"] > stats["threads"]
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    turns = spec["turns"]
    changed = {c for u in turns["updates"] for c in u["changed"]}
    assert {"model", "personality", "mode", "sandbox_mode", "approval_policy", "cwd"} <= changed
    assert turns["compaction"]["params"]["tools"] == [] and turns["compaction"]["history"]
    assert set(turns["skills"]["files"]) and (spec_dir / next(iter(turns["skills"]["files"].values()))).is_file()
    for name in ("model_switch", "personality_spec", "compact_prompt", "compact_summary", "skill"):
        assert yaml.safe_load((spec_dir / "fragments" / f"{name}.yaml").read_text())["later"] is True
    # No scratch path survives in a later-turn text either.
    later = [p.read_text() for p in (spec_dir / "fragments").glob("*.yaml")] + [p.read_text() for p in (spec_dir / "texts").rglob("*.md")]
    assert not any("promptspec-codex-" in t for t in later)


def test_a_piece_only_the_start_sends_is_learned_from_a_read_only_start(imported):
    spec_dir, stats = imported
    assert any("/read-only/" in v for v in stats["from"])
    # The memories root of a workspace-write start is a placeholder filled until the sandbox is switched.
    roots = (spec_dir / "texts" / "permissions" / "roots" / "workspace-write.md").read_text()
    assert "{{ since_start }}" in roots and "memories" not in roots
    perm = yaml.safe_load((spec_dir / "fragments" / "permissions.yaml").read_text())["text"]
    assert '"sandbox_mode" not in thread.switched' in perm and "memories" in perm


def test_the_spec_with_later_turns_lints_strict_clean(imported, capsys):
    spec_dir, _ = imported
    assert main(["lint", "--spec", str(spec_dir), "--strict"]) == 0, capsys.readouterr().out


def test_verify_compares_every_request_of_the_standard_threads(imported, codex, capsys):
    spec_dir, _ = imported
    rc = main(["verify", "--cli", str(codex), "--spec", str(spec_dir), "--sample", "2", "--threads", "1", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    names = {t["thread"] for t in data["threads"]}
    assert {"two-turns", "model-within-family", "personality-friendly", "sandbox", "approval", "cwd",
            "skill-mention", "compact-manual", "compact-prompt", "compact-auto", "compact-below", "compact-configured"} <= names
    # The sampled variant starts read-only: its switch to workspace-write sends the writable
    # roots without the memories root only a workspace-write start has (thread.switched).
    assert {t["variant"].split("/")[3] for t in data["threads"]} == {"read-only"}
    assert [t for t in data["threads"] if not t["identical"]] == [] and rc == 0


def test_an_edited_later_turn_text_fails_verify_and_names_the_request(imported, codex, tmp_path, capsys):
    import shutil

    spec_dir, _ = imported
    edited = tmp_path / "edited"
    shutil.copytree(spec_dir, edited)
    path = edited / "fragments" / "compact_prompt.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["variables"]["release_prompt"] += "One more line.\n"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000))
    rc = main(["verify", "--cli", str(codex), "--spec", str(edited), "--sample", "1", "--threads", "1", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    manual = next(t for t in data["threads"] if t["thread"] == "compact-manual")
    assert rc == 1 and not manual["identical"] and manual["request"] == 2
    assert "One more line." in manual["diff"]


def test_a_part_holding_what_the_threads_reach_learns_the_same_later_turns(imported, codex, tmp_path, capsys):
    """--only with --later-turns: a part with every value the standard threads
    start from or switch to (54 of each model's 144 configurations) learns what
    the whole matrix learns, and reproduces every thread as the whole does."""
    whole, whole_stats = imported
    part = tmp_path / "part"
    assert main(["import-codex", "--cli", str(codex), "--out", str(part), "--model", MODEL, "--model", OTHER,
                 "--only", "personality=unset,none,friendly", "--only", "approval_policy=on-request,never",
                 "--later-turns"]) == 0
    out = capsys.readouterr().out
    assert "108 of 108 captured first requests reproduced" in out
    assert f"later turns: {whole_stats['threads']} standard threads ({whole_stats['thread_requests']} requests) reproduced" in out
    assert yaml.safe_load((part / "spec.yaml").read_text())["turns"] == yaml.safe_load((whole / "spec.yaml").read_text())["turns"]
    later = sorted(p.relative_to(whole).as_posix() for p in (whole / "texts" / "later").rglob("*") if p.is_file())
    later += sorted(p.relative_to(whole).as_posix() for p in (whole / "fragments").glob("*.yaml")
                    if yaml.safe_load(p.read_text()).get("later"))
    assert later and all((part / rel).read_text() == (whole / rel).read_text() for rel in later), later
