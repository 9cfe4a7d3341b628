"""The rules the CLI importer learns from captures, on small inputs of our own
(no Codex needed): dependencies, the permissions split, personality rules, the
sentinels turned back into placeholders, and sorted writable roots."""

from __future__ import annotations

import pytest

from promptspec.importers.codex_cli import learn, write_spec
from promptspec.oracle import parts
from promptspec.oracle.capture import Config
from promptspec.render import codex_join


def cfg(**kw) -> Config:
    return Config(**{"model": "m", **kw})


def test_factor_finds_the_smallest_axis_set():
    values = {cfg(sandbox_mode=s, approval_policy=a): f"{s}!" for s in ("read-only", "workspace-write") for a in ("never", "on-request")}
    table = learn.factor(values)
    assert table.axes == ("sandbox_mode",)
    assert table.rows == {("read-only",): "read-only!", ("workspace-write",): "workspace-write!"}
    values[cfg(sandbox_mode="read-only", approval_policy="never")] = None  # absent in one cell
    table = learn.factor(values)
    assert table.axes == ("sandbox_mode", "approval_policy") and ("read-only", "never") not in table.rows


@pytest.mark.parametrize("sandbox, approval, roots", [
    ("Filesystem sandboxing: read-only.", "Approvals: never.\n", ""),
    ("Filesystem sandboxing: ww.", "# Escalation\n\nAsk first.\n", " The writable roots are `/a`, `/b`."),
    ("", "", ""),
])
def test_permissions_split_round_trips(sandbox, approval, roots):
    text = learn.join_permissions(sandbox, approval, roots)
    assert learn.split_permissions(text) == (sandbox, approval, roots)
    assert text == learn.PERMISSIONS_START + (codex_join(sandbox, approval, roots) or "\n") + learn.PERMISSIONS_END


def test_remove_section_stops_at_the_next_heading_of_its_level():
    text = "A\n\n# Personality\nwarm\n## sub\nkind\n\n# Rules\nB\n"
    assert learn.remove_section(text, learn.SECTION_HEADING) == "A\n\n# Rules\nB\n"
    assert learn.remove_section("# Personality\nonly\n", learn.SECTION_HEADING) == ""
    assert learn.remove_section("no such section\n", learn.SECTION_HEADING) == "no such section\n"


def test_personality_rules_are_learned_from_the_catalog():
    template = "T {{ personality }} E"
    catalog = {"models": [
        {"slug": "a", "model_messages": {"instructions_template": template, "instructions_variables": {
            "personality_default": "", "personality_friendly": "F", "personality_pragmatic": "P"}}},
        {"slug": "b", "model_messages": {"instructions_template": "X\n# Personality\np\n# Rest\nr\n"}},
        {"slug": "c", "base_instructions": "plain"},
    ]}
    observed = {("a", "unset"): "T P E", ("a", "none"): "T  E", ("a", "friendly"): "T F E",
                ("b", "unset"): "X\n# Personality\np\n# Rest\nr\n", ("b", "none"): "X\n# Rest\nr\n",
                ("b", "friendly"): "X\n# Personality\np\n# Rest\nr\n",
                ("c", "unset"): "plain", ("c", "none"): "plain", ("c", "friendly"): "plain"}
    learned = learn.learn_base(catalog, observed)
    assert learned.rules["unset"].fills == "pragmatic"
    assert learned.rules["none"].removes_section == "# Personality"
    assert learned.rules["friendly"] == learn.PersonalityRule(None, None)
    assert learned.exceptions == {}
    observed[("c", "friendly")] = "something else"
    assert learn.learn_base(catalog, observed).exceptions == {("c", "friendly"): "something else"}


def test_sentinels_become_placeholders():
    s = {"cwd": "/tmp/x/repo", "home": "/tmp/x/home", "current_date": "2026-12-01", "timezone": "Etc/UTC", "shell": "bash"}
    text = "<cwd>/tmp/x/repo</cwd> <current_date>2026-12-01</current_date> /tmp/x/home/.codex 2026-12-01"
    assert parts.to_placeholders(text, s) == "<cwd>{{ cwd }}</cwd> <current_date>{{ current_date }}</current_date> {{ home }}/.codex 2026-12-01"


def test_sorted_roots_become_a_computed_line():
    s = {"cwd": "/tmp/x/repo", "home": "/tmp/x/home"}
    table = learn.Table(("sandbox_mode",), {("workspace-write",): " The writable roots are `/tmp`, `/tmp/x/repo`."})
    expr, variables, _ = write_spec._sorted_roots(table, s)
    assert '["/tmp", cwd] | sort' in expr and variables == {"roots_sent_for": ["workspace-write"]}
    odd = learn.Table(("sandbox_mode",), {("workspace-write",): " Something else."})
    assert write_spec._sorted_roots(odd, s) is None


def test_part_names_come_from_markers_and_position():
    body = {"input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a model."}]},
        {"type": "message", "role": "developer", "id": "msg_1", "content": [
            {"type": "input_text", "text": "<permissions instructions>\nx\n</permissions instructions>"},
            {"type": "input_text", "text": "raw developer text"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
    ], "prompt_cache_key": "t", "model": "m"}
    p = parts.parse(body, "hello")
    assert p.prompt == "hello" and p.instructions is None
    assert [[n for n, _ in i.parts] for i in p.items] == [["base_instructions"], ["permissions", "part_1"]]
    assert "prompt_cache_key" not in p.params


def test_copies_of_a_tool_say_how_they_differ():
    """Four web_search definitions were each "A tool Codex sends (web_search)";
    each now names the fields that set it apart and when it is sent."""
    from promptspec.importers.codex_cli.tools_spec import describe_copy

    on = {"type": "web_search", "external_web_access": True, "search_content_types": ["text"]}
    off = {"type": "web_search", "external_web_access": False}
    assert describe_copy(on, [on, off], {"sandbox_mode": ["danger-full-access"]}) == (
        "web_search, one of 2 definitions Codex sends: external_web_access: true; with search_content_types;"
        " when sandbox_mode = danger-full-access.")
    assert describe_copy(off, [on, off], {}) == "web_search, one of 2 definitions Codex sends: external_web_access: false; no search_content_types."
    assert describe_copy(off, [off], {}) == "A tool Codex sends (web_search)."
