"""Later turns of 0.150.0 with a multi-agent v2 model and gpt-5.5 (two
compaction families), where only gpt-5.5's family sends a personality update
and a session gpt-5.5 started keeps some of its own after switching to the v2
model: the code-mode exec tool's text (an `exact:` entry with `first:`) and
its base instructions as the v2 layout's first message.  The release is
installed from npm at test time (tests/codex_release.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from codex_release import import_later_turns
from promptspec.cli import main

RELEASE = "0.150.0"
MODELS = ("gpt-5.6-sol", "gpt-5.5")  # a v2 model first, then one of another comp_hash family

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def families(tmp_path_factory) -> tuple[Path, Path, dict]:
    return import_later_turns(RELEASE, MODELS, tmp_path_factory.mktemp("later-families"))


def test_what_only_the_other_familys_start_sends_is_learned(families):
    _, spec_dir, stats = families
    assert stats["threads"] >= 30
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    catalog = {m["slug"]: m for m in yaml.safe_load((spec_dir / "models.json").read_text())["models"]}
    # The v2 start sends no personality update; gpt-5.5's family does: its update holds for that family only.
    (personality,) = [u for u in spec["turns"]["updates"] if "personality" in u["changed"]]
    assert personality["when"] == {"comp_hash": [catalog["gpt-5.5"]["comp_hash"]]}
    # A session gpt-5.5 started sends one of the v2 model's tools with its own text: stated for such sessions.
    session_tools = [e for e in spec.get("exact", []) if "first" in e]
    assert session_tools and all(e["part"].startswith("tool ") for e in session_tools)
    assert all(e["first"] == {"comp_hash": [catalog["gpt-5.5"]["comp_hash"]]} for e in session_tools)
    own = {p.stem: yaml.safe_load(p.read_text()) for p in (spec_dir / "tools").glob("*.json")}
    assert all(e["value"] != own[e["part"].split(" ", 1)[1]]["definition"] for e in session_tools)
    assert main(["lint", "--spec", str(spec_dir), "--strict"]) == 0


def test_verify_runs_a_start_of_each_family_and_finds_every_thread_identical(families, capsys):
    cli, spec_dir, _ = families
    report = spec_dir.parent / "report.json"
    assert main(["verify", "--cli", str(cli), "--spec", str(spec_dir), "--threads", "2",
                 "--out", str(report), "--format", "json"]) == 0
    data = yaml.safe_load(report.read_text())
    starts = {t["variant"].split("/")[0] for t in data["threads"]}
    assert starts == set(MODELS)  # one start of each family, whatever the matrix order
    assert data["threads"] and all(t["identical"] for t in data["threads"])


@pytest.mark.parametrize("release, models, check", [
    # A switch to gpt-5.5 re-injects its personality text in the rebuilt context (beside the base wrapper).
    ("0.147.0", ("gpt-5.6-sol", "gpt-5.5"), "rebuilt_personality"),
    # A switch within a family from a model with a text for the unset mode to one without: empty markers
    # (two models of the one family: no model of another is needed for the switch within it).
    ("0.153.2", ("gpt-6-astra", "gpt-5.6-sol"), "emptied"),
    # The compaction request leaves the history's tool-list item out (the other values keep or empty it):
    # the manual compaction of a start of the model that sends its tools as an input item.
    ("0.162.0", ("gpt-6-astra",), "input_tools"),
])
def test_what_a_release_adds_after_a_switch_is_learned(release, models, check, tmp_path):
    _, spec_dir, stats = import_later_turns(release, models, tmp_path)
    assert stats["threads"] >= 30  # written only because every request of every thread is reproduced
    spec = yaml.safe_load((spec_dir / "spec.yaml").read_text())
    if check == "rebuilt_personality":
        rebuilt = yaml.safe_load((spec_dir / "fragments" / "personality_spec_rebuilt.yaml").read_text())
        assert rebuilt["later"] is True and rebuilt["slot"] and list(rebuilt["when"]) == ["comp_hash"]
        assert "personality.fills" in rebuilt["text"] and "thread.previous.model != model.slug" in rebuilt["text"]
    elif check == "input_tools":
        assert spec["turns"]["compaction"]["input_tools"] == "none"
    else:
        emptied = [u for u in spec["turns"]["updates"] if u.get("emptied")]
        assert [u["fragments"] for u in emptied] == [["collaboration_mode"]]
