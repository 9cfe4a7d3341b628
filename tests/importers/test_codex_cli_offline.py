"""The CLI importer's build and self-check on captures of our own making (no
Codex): a release whose instructions no catalog rule gives is imported with
`exact:` entries and reproduced byte for byte; request parameters that equal
the documented defaults are not written."""

from __future__ import annotations

import itertools

import yaml

from promptspec.importers.codex_cli.importer import self_check
from promptspec.importers.codex_cli.write_spec import build
from promptspec.oracle.capture import Capture, Config, Harvest
from promptspec.oracle.scratch import PROMPT

TEMPLATE = "You are a careful agent.\n\n{{ personality }}\n\nWork in small steps.\n"
CATALOG = {"models": [
    {"slug": slug, "display_name": slug, "context_window": 100000, "supports_parallel_tool_calls": False,
     "model_messages": {"instructions_template": TEMPLATE,
                        "instructions_variables": {"personality_friendly": "Be warm.", "personality_pragmatic": "Be brief."}}}
    for slug in ("m-one", "m-two")]}
SENTINELS = {"cwd": "/tmp/ps-x/repo", "home": "/tmp/ps-x/home", "current_date": "2026-01-01", "timezone": "Etc/UTC", "shell": "bash"}
ODD = "\nAnd one line no catalog field holds.\n"


def instructions(model: str, personality: str) -> str:
    fill = {"friendly": "Be warm.", "pragmatic": "Be brief.", "unset": "Be brief."}.get(personality, "")
    text = TEMPLATE.replace("{{ personality }}", fill)
    return text + ODD if model == "m-two" and personality in ("friendly", "pragmatic") else text


def body(cfg: Config) -> dict:
    return {"model": cfg.model, "instructions": instructions(cfg.model, cfg.personality),
            "input": [{"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"<environment_context>\n  <cwd>{SENTINELS['cwd']}</cwd>\n</environment_context>"}]},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]}],
            "tools": [], "tool_choice": "auto", "parallel_tool_calls": False, "store": False, "stream": True, "include": []}


def harvest() -> Harvest:
    configs = [Config(m, p, "unset", "workspace-write", "never")
               for m, p in itertools.product(("m-one", "m-two"), ("unset", "none", "friendly", "pragmatic"))]
    return Harvest("9.9.9", dict(SENTINELS), CATALOG, captures=[Capture(c, body(c)) for c in configs])


def test_instructions_no_rule_gives_are_exact_and_reproduced(tmp_path):
    h = harvest()
    built = build(h)
    for rel, text in built.files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    spec = yaml.safe_load(built.files["spec.yaml"])
    # One entry per distinct text (friendly and pragmatic fill differently), for the cells no rule explains.
    assert [(e["part"], e["when"]) for e in spec["exact"]] == [
        ("instructions", {"model": "m-two", "personality": "friendly"}), ("instructions", {"model": "m-two", "personality": "pragmatic"})]
    assert all("9.9.9" in e["why"] and built.files[e["file"]].endswith(ODD) for e in spec["exact"])
    assert "request" not in spec  # every parameter is the documented default
    assert self_check(tmp_path, h) == (8, 8, None)


SYNTAX = 'Write {{ name }} and {% if x %}, {# no #}, {{{ deep }}} and {{ "{{" }} as they are.\n'


def test_captured_template_syntax_is_stored_and_reproduced(tmp_path):
    """Totality: a captured text that shows template syntax itself (in the
    instructions no rule gives, in a message part, beside a sentinel) is
    written so that it renders back to the same bytes, not refused."""
    def odd_body(cfg: Config) -> dict:
        b = body(cfg)
        if cfg.model == "m-two" and cfg.personality in ("friendly", "pragmatic"):
            b["instructions"] += SYNTAX
        b["input"].insert(0, {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": f"Notes for {SENTINELS['cwd']}: " + SYNTAX}]})
        return b

    h = harvest()
    h.captures = [Capture(c.config, odd_body(c.config)) for c in h.captures]
    built = build(h)
    for rel, text in built.files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    texts = "".join(t for p, t in built.files.items() if p.startswith("texts/"))
    assert '{{ "{{" }} name }}' in texts and "{{ cwd }}" in texts  # a literal, and the sentinel still a placeholder
    assert self_check(tmp_path, h) == (8, 8, None)
