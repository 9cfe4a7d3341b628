"""Reviews see the conversations: an edit of a later-turn text (in no first
request) shows in `diff` with the conversations and starts it reaches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from promptspec.cli import main

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def _edited(tmp_path: Path, rel: str, addition: str) -> Path:
    spec = tmp_path / "edited"
    shutil.copytree(TEMPLATES, spec)
    path = spec / rel
    path.write_text(path.read_text(encoding="utf-8") + addition, encoding="utf-8")
    return spec


def test_an_edit_of_the_compaction_prompt_names_it_and_the_conversations_it_reaches(tmp_path, capsys):
    spec = _edited(tmp_path, "fragments/compact_prompt.md", "- the exact error messages seen.\n")
    assert main(["diff", f"dir:{TEMPLATES}", f"dir:{spec}", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "No assembled request changed." not in out
    assert "**Conversations**" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("- compact&#95;prompt changed"))
    # The two scripts with a compaction, each from every model; mode-switch never compacts.
    assert "long-session" in line and "model-switch" in line and "mode-switch" not in line
    assert "+- the exact error messages seen." in out

    assert main(["diff", f"dir:{TEMPLATES}", f"dir:{spec}", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (change,) = data["conversations"]
    assert change["fragment"] == "compact_prompt" and set(change["reaches"]) == {"long-session", "model-switch"}
    assert len(change["reaches"]["long-session"]) == 3 and change["delta"] > 0


def test_an_edit_of_a_switch_message_reaches_only_the_conversations_that_switch(tmp_path, capsys):
    spec = _edited(tmp_path, "fragments/personality_update.md", "{# a comment changes nothing #}")
    assert main(["diff", f"dir:{TEMPLATES}", f"dir:{spec}", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["conversations"] == []
    spec2 = tmp_path / "again"
    shutil.copytree(spec, spec2)
    md = spec2 / "fragments" / "personality_update.md"
    md.write_text(md.read_text(encoding="utf-8").replace("Use it from this message on:", "Use it from now on:"), encoding="utf-8")
    assert main(["diff", f"dir:{TEMPLATES}", f"dir:{spec2}", "--format", "text"]) == 0
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if "personality_update changed" in ln]
    assert "model-switch" in line and "long-session" not in line


def test_the_lock_pins_every_request_of_the_conversations_and_check_sees_a_later_turn_edit(tmp_path, capsys):
    lock = TEMPLATES / "prompts.lock.json"
    data = json.loads(lock.read_text(encoding="utf-8"))
    threads = data["conversations"]
    assert len(threads) == 3 * 3  # three scripts, each from every model
    assert [e["kind"] for e in threads["long-session from harbor-5/default/default/workspace-write"]].count("compaction") == 2
    spec = _edited(tmp_path, "fragments/compact_prompt.md", "- the exact error messages seen.\n")
    shutil.copy(lock, spec / "prompts.lock.json")
    assert main(["check", "--spec", str(spec)]) == 1
    out = capsys.readouterr().out
    assert "conversations differ from the lock" in out
    assert "long-session from harbor-5/default/default/workspace-write: request 5 differs" in out
    # First requests are unchanged: only the conversation lines say why.
    assert "matches the spec (88 variants)" in out
    assert main(["lock", "--spec", str(spec)]) == 0 and main(["check", "--spec", str(spec)]) == 0


def test_history_names_the_threads_a_later_turn_edit_changed_from_text_and_lock_sides(tmp_path, capsys):
    spec = _edited(tmp_path, "fragments/compact_prompt.md", "- the exact error messages seen.\n")
    for base in (f"dir:{TEMPLATES}", f"lock:{TEMPLATES / 'prompts.lock.json'}"):
        assert main(["history", base, f"dir:{spec}", "--format", "json"]) == 0
        (step,) = json.loads(capsys.readouterr().out)["steps"]
        assert step["variants"]["changed"] == 0
        threads = step["conversations"]
        assert any(t.startswith("long-session from harbor-5/default/default/workspace-write: request 5 differs") for t in threads)
        assert not any(t.startswith("mode-switch") for t in threads)


def test_check_annotations_put_a_later_turn_edit_on_its_file_and_name_the_threads(tmp_path, capsys):
    spec = _edited(tmp_path, "fragments/compact_prompt.md", "- the exact error messages seen.\n")
    shutil.copy(TEMPLATES / "prompts.lock.json", spec / "prompts.lock.json")
    assert main(["check", "--spec", str(spec), "--format", "github"]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("::error")]
    (note,) = [ln for ln in lines if "compact_prompt.md" in ln]
    # On the edited file, naming the threads it reaches (mode-switch never compacts); nothing else is blamed.
    assert "long-session from harbor-5/default/default/workspace-write" in note and "mode-switch" not in note
    assert len(lines) == 1, lines
    assert main(["check", "--spec", str(spec), "--format", "sarif"]) == 1
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in results for loc in r["locations"]}
    assert len(results) == 1 and any(u.endswith("fragments/compact_prompt.md") for u in uris)


def test_a_lock_without_conversation_sources_still_fails_check_on_the_lock_file(tmp_path, capsys):
    spec = _edited(tmp_path, "fragments/compact_prompt.md", "- the exact error messages seen.\n")
    data = json.loads((TEMPLATES / "prompts.lock.json").read_text(encoding="utf-8"))
    del data["conversation_sources"]  # a lock written before they were recorded
    (spec / "prompts.lock.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["check", "--spec", str(spec), "--format", "github"]) == 1
    (note,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("::error")]
    assert "prompts.lock.json" in note and "conversations differ" in note and "request 5 differs" in note
