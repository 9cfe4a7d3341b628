"""Later turns of a newer release (0.171.0): a partial environment context on
a sandbox switch, a note re-sent with a new folder's AGENTS.md, joined user
updates, a model switch that names the new model, and a switch across
compaction families after which the session keeps its first model's
multi-agent messages and collaboration tool (`turns.session`).  The release
is installed from npm at test time (tests/codex_release.py); three models
keep it to a few minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from codex_release import import_later_turns
from promptspec.cli import main

RELEASE = "0.171.0"
MODELS = ("gpt-6-sol", "gpt-6-luna", "gpt-5.5")  # two of one comp_hash family, one of another

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def newer(tmp_path_factory) -> tuple[Path, Path, dict]:
    return import_later_turns(RELEASE, MODELS, tmp_path_factory.mktemp("later-newer"), whole=True)  # its verify samples the whole matrix


def test_the_newer_release_is_learned_and_every_thread_reproduced(newer):
    _, spec_dir, stats = newer
    assert stats["threads"] >= 28 and stats["thread_requests"] > stats["threads"]
    turns = yaml.safe_load((spec_dir / "spec.yaml").read_text())["turns"]
    by_fragment = {tuple(u["fragments"]): u for u in turns["updates"]}
    env = by_fragment[("environment_context",)]
    # Only the changed lines of the context go, the date and time zone always, the shell with the folder.
    assert env["partial"]["always"] and env["partial"]["with"] and "cwd" in env["changed"]
    assert turns.get("join") == ["user"]
    switch = yaml.safe_load((spec_dir / "fragments" / "model_switch.yaml").read_text())
    assert "{{ model.slug }}" in switch["start"] + switch["text"] and not any(m in json.dumps(switch) for m in MODELS)
    assert yaml.safe_load((spec_dir / "fragments" / "agents_md_update.yaml").read_text())["later"] is True
    # After a switch across families the rebuilt context is laid out as the first model's, and its
    # collaboration tool stays: learned from the model-across-families thread.
    assert turns["session"]["layout"] is True and "collaboration" in turns["session"]["tools"]
    assert yaml.safe_load((spec_dir / "fragments" / "multi_agent_role_session.yaml").read_text())["later"] is True
    # gpt-5.5's family sends no personality update: learned from a start of that family.
    (personality,) = [u for u in turns["updates"] if "personality" in u["changed"]]
    assert list(personality["when"]) == ["comp_hash"]
    assert main(["lint", "--spec", str(spec_dir), "--strict"]) == 0


def test_verify_finds_every_request_of_the_standard_threads_identical(newer, capsys):
    cli, spec_dir, _ = newer
    # The threads start from gpt-6-luna (not the importer's start model), read-only, no mode set:
    # within the family to gpt-6-sol, across it to gpt-5.5.
    rc = main(["verify", "--cli", str(cli), "--spec", str(spec_dir), "--sample", "4", "--threads", "1", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    names = {t["thread"] for t in data["threads"]}
    assert {"two-turns", "model-within-family", "model-across-families", "personality-none", "mode-from-unset", "sandbox",
            "approval", "cwd", "cwd-unrestricted", "skill-mention", "compact-manual", "compact-prompt", "compact-auto",
            "compact-below", "compact-configured"} <= names
    assert {t["variant"].split("/")[0] for t in data["threads"]} == {"gpt-6-luna"}
    assert data["compared"] == data["identical"] == 4
    assert [t for t in data["threads"] if not t["identical"]] == [] and rc == 0


def test_a_gpt_5_5_start_switching_to_a_multi_agent_v2_model_is_identical(newer):
    """The other direction of the switch across families: a thread gpt-5.5
    starts keeps its layout, its deferred-tools text and its (lack of a)
    collaboration tool, but not its base instructions, and its switch compacts
    with the turn's settings (turns.session.base/slots/tools,
    compaction.switch_when), learned from both directions at import."""
    from promptspec.oracle import binary as _binary
    from promptspec.oracle import thread as _thread
    from promptspec.oracle.machine import configs_of, models_tools, spec_for_machine
    from promptspec.oracle.pool import CapturePool
    from promptspec.oracle.thread_compare import compare_thread
    from promptspec.spec import load_spec
    from promptspec.verify.run import recorded_world_of

    cli, spec_dir, _ = newer
    turns = yaml.safe_load((spec_dir / "spec.yaml").read_text())["turns"]
    only_v2 = {"comp_hash": ["3000"]}  # the multi-agent v2 family of the first start
    assert turns["session"]["base"] == only_v2 and turns["compaction"]["switch_when"] == only_v2
    assert turns["session"]["tools"] == {"collaboration": "first", "tool_search": "both"}
    assert turns["session"]["slots"] == ["deferred_tools"]
    spec = load_spec(spec_dir)
    pairs = configs_of(spec)
    variant, cfg = next((v, c) for v, c in pairs if c.model == "gpt-5.5" and c.mode == "plan" and c.personality == "friendly")
    with CapturePool(_binary.identify(cli), recorded_world_of(spec_dir), 60, 0, 1, True) as pool:
        pool.warm(cfg)
        (thread,) = [t for t in _thread.standard_threads(cfg, pool.catalog(), pool.bundled_skill(), str(pool.scratch.cwd),
                                                         models_in=[m.slug for m in spec.models])
                     if t.name == "model-across-families"]
        (cap,) = pool.threads([thread])
        machine = spec_for_machine(spec, pool.scratch.values())
    assert thread.steps[1].params()["model"] in ("gpt-6-sol", "gpt-6-luna")
    result = compare_thread(machine, variant, cap, models_tools(spec))
    assert result.identical, (result.request, result.part, result.diff)
    assert result.requests == 3
