"""A captured thread as a conversation script (no Codex needed): each
turn/start override becomes the step's `set:` in the spec's names."""

from __future__ import annotations

from promptspec.oracle.capture import Config
from promptspec.oracle.thread import ThreadStep, Thread, _json, collaboration, standard_threads
from promptspec.oracle.thread_compare import script_steps
from promptspec.spec.readers.scripts import parse_script

CATALOG = {"models": [
    {"slug": "a", "comp_hash": "x", "context_window": 1000},
    {"slug": "b", "comp_hash": "x", "auto_compact_token_limit": 500},
    {"slug": "c", "comp_hash": "y", "context_window": 2000},
]}


def test_overrides_become_settings_in_the_specs_names():
    thread = Thread("t", Config("a"), (
        ThreadStep("hello", usage=7),
        ThreadStep("again", _json(model="b", personality="none", collaborationMode=collaboration("plan", "b"),
                                  sandboxPolicy={"type": "readOnly"}, approvalPolicy="never", cwd="/x/pkg")),
        ThreadStep(compact=True),
    ))
    steps = script_steps(thread)
    assert steps[0] == {"user": "hello", "reply": "ok", "usage": 7, "summary": "ok"}
    assert steps[1]["set"] == {"model": "b", "personality": "none", "mode": "plan", "sandbox_mode": "read-only",
                               "approval_policy": "never", "cwd": "/x/pkg"}
    assert steps[2] == {"compact": True, "reply": "ok"}
    assert [s.kind for s in parse_script(steps, "t").steps] == ["user", "user", "compact"]


def test_the_standard_set_covers_every_kind_of_switch_and_compaction():
    names = {t.name for t in standard_threads(Config("a"), CATALOG, "skill-x", "/w")}
    assert {"two-turns", "model-within-family", "model-across-families", "personality-friendly", "personality-none",
            "mode-from-unset", "sandbox", "approval", "cwd", "cwd-unrestricted", "skill-mention", "compact-manual", "compact-prompt",
            "compact-auto", "compact-below", "compact-configured"} == names
    auto = {t.name: t for t in standard_threads(Config("a"), CATALOG, None, "/w")}
    # 90 % of a's window; one below for the negative control.
    assert auto["compact-auto"].steps[0].usage == 900 and auto["compact-below"].steps[0].usage == 899
    assert [t.steps[1].params()["model"] for n, t in auto.items() if n.startswith("model-")] == ["b", "c"]
    # A mode set at the start: switched and back, not "from unset".
    moded = {t.name for t in standard_threads(Config("a", mode="default"), CATALOG, None, "/w")}
    assert "mode-switch-and-back" in moded and "mode-from-unset" not in moded
    only = {t.name for t in standard_threads(Config("a"), CATALOG, None, "/w", models_in=["a"])}
    assert not any(n.startswith("model-") for n in only)


def test_thread_starts_take_one_of_each_compaction_family_first():
    from promptspec.verify.run import thread_starts

    configs = [Config(m, p, "default") for m in ("a", "b", "c") for p in ("unset", "friendly")]
    starts = thread_starts(configs, CATALOG, 2)
    # a's family, then c's (the other comp_hash) in a's settings, not b (a's own family).
    assert [(c.model, c.personality) for c in starts] == [("a", "unset"), ("c", "unset")]
    assert [c.model for c in thread_starts(configs, CATALOG, 3)] == ["a", "c", "a"]
    assert thread_starts(configs, CATALOG, 1) == configs[:1]
    one_family = [c for c in configs if c.model != "c"]
    assert thread_starts(one_family, CATALOG, 2) == one_family[:2]
