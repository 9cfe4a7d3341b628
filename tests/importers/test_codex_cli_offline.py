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


def written(built, folder):
    """The built spec's files written into `folder` (as the importer's staging would be)."""
    for rel, text in built.files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return built


def test_instructions_no_rule_gives_are_exact_and_reproduced(tmp_path):
    h = harvest()
    built = written(build(h), tmp_path)
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
    built = written(build(h), tmp_path)
    texts = "".join(t for p, t in built.files.items() if p.startswith("texts/"))
    assert '{{ "{{" }} name }}' in texts and "{{ cwd }}" in texts  # a literal, and the sentinel still a placeholder
    assert self_check(tmp_path, h) == (8, 8, None)


def test_tools_in_contradicting_orders_are_refused_naming_part_models_and_tools():
    """The one thing about tools a spec cannot say: two tools sent in both orders."""
    import pytest

    from promptspec.importers.codex_cli.write_spec import ImportProblem

    def tool(name):
        return {"type": "function", "name": name, "description": f"{name} tool", "parameters": {"type": "object", "properties": {}}}

    h = harvest()
    for c in h.captures:
        c.body["tools"] = [tool("alpha"), tool("beta")] if c.config.model == "m-one" else [tool("beta"), tool("alpha")]
    with pytest.raises(ImportProblem) as exc:
        build(h)
    said = str(exc.value)
    assert "part tools" in said and "alpha" in said and "beta" in said and "model m-one" in said and "tools.order" in said


def test_an_agents_md_part_of_a_shape_the_rule_does_not_give_is_stored_as_captured(tmp_path):
    """Two headers in one import (the global-only one in some cells): no one
    marker fits, so the part is kept as the captured texts, not refused."""
    from promptspec.oracle.scratch import PROJECT_DOC

    def with_doc(cfg: Config) -> dict:
        b = body(cfg)
        head = f"# AGENTS.md instructions for {SENTINELS['cwd']}" if cfg.model == "m-one" else "# AGENTS.md instructions"
        b["input"][0]["content"].insert(0, {"type": "input_text", "text": f"{head}\n\n<INSTRUCTIONS>\n{PROJECT_DOC}\n</INSTRUCTIONS>"})
        return b

    h = harvest()
    h.captures = [Capture(c.config, with_doc(c.config)) for c in h.captures]
    built = written(build(h), tmp_path)
    assert "start" not in yaml.safe_load(built.files["fragments/agents_md.yaml"])
    assert self_check(tmp_path, h) == (8, 8, None)


def test_a_configuration_one_model_refuses_is_excluded_from_the_matrix(tmp_path):
    """m-two refuses personality none (m-one takes it): the spec has no such variant,
    so verify never meets a variant Codex would not run."""
    from promptspec.assemble import matrix
    from promptspec.spec import load_spec

    h = harvest()
    h.captures = [Capture(c.config, None, refused="personality none is not supported")
                  if (c.config.model, c.config.personality) == ("m-two", "none") else c for c in h.captures]
    written(build(h), tmp_path)
    spec = yaml.safe_load((tmp_path / "spec.yaml").read_text())
    assert spec["matrix"]["exclude"] == [{"model": "m-two", "personality": "none"}]
    ids = [v.id for v in matrix(load_spec(tmp_path))]
    assert len(ids) == 7 and not any(i.startswith("m-two/none/") for i in ids)
    assert self_check(tmp_path, h) == (7, 7, None)
