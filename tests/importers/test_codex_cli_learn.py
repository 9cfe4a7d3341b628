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


# ---------------------------------------------------------------------------
# Reviewed conditions, names and rules (conditions.py, tools_spec.py)

from promptspec.importers.codex_cli import conditions, tools_spec  # noqa: E402

CATALOG = {"models": [
    {"slug": "a", "base_instructions": "A.", "web_search_tool_type": "text_and_image", "priority": 1, "supports_parallel_tool_calls": True},
    {"slug": "b", "base_instructions": "B.", "web_search_tool_type": "text", "priority": 2, "supports_parallel_tool_calls": True},
    {"slug": "c", "base_instructions": "C.", "web_search_tool_type": "text_and_image", "priority": 3, "supports_parallel_tool_calls": False},
]}


def test_models_are_named_by_the_catalog_field_that_picks_them():
    cat = conditions.Catalog(CATALOG, ["a", "b", "c"])
    assert cat.when({"model": ["a", "c"], "sandbox_mode": ["read-only"]}, about="web_search") == \
        {"web_search_tool_type": "text_and_image", "sandbox_mode": "read-only"}
    assert cat.when({"model": ["a", "b"]}, about="parallel_tool_calls") == {"supports_parallel_tool_calls": "true"}
    assert cat.when({"model": ["a", "b", "c"], "mode": ["plan"]}) == {"mode": "plan"}  # every model: no condition
    assert cat.when({"model": ["b"]}, about="order") == {"model": "b"}  # one model, an unrelated field: the slug says more
    assert "priority" not in cat.fields  # tells every model apart: never a condition


def test_request_rules_are_the_residue_over_the_defaults():
    from promptspec.oracle.capture import Config

    def cfg(model):
        return Config(model=model, personality="none", mode="unset", sandbox_mode="read-only", approval_policy="never")

    body = {"model": "x", "instructions": "", "input": [], "tools": [], "tool_choice": "auto", "parallel_tool_calls": True,
            "store": False, "stream": True, "include": []}
    bodies = {cfg(m): dict(body) for m in "abc"}
    cat = conditions.Catalog(CATALOG, ["a", "b", "c"])
    out = tools_spec._request(bodies, cat, CATALOG)
    # Only c differs from its catalog default (false); one rule, no reset-then-set pair, no order rule.
    assert out == {"rules": [{"when": {"supports_parallel_tool_calls": "false"}, "params": {"parallel_tool_calls": True}}]}
    # Another order for one model: an order rule for it alone.
    bodies[cfg("b")] = {k: body[k] for k in ("model", "stream", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls", "store", "include")}
    out = tools_spec._request(bodies, cat, CATALOG)
    assert out["rules"][0] == {"when": {"model": "b"}, "order": list(bodies[cfg("b")])}


def test_definitions_sent_under_one_name_are_named_for_what_differs():
    group = [{"type": "web_search", "external_web_access": False, "search_content_types": ["text", "image"]},
             {"type": "web_search", "external_web_access": True}]
    names = tools_spec._variant_names(group, "web_search", [{}, {}])
    assert names == ["web_search.no-external_web_access.text-image", "web_search.external_web_access"]
    long = [{"type": "function", "name": "v", "parameters": {"x": 1}}, {"type": "function", "name": "v", "parameters": {"x": 2}}]
    by_field = [{"supports_image_detail_original": "true"}, {"supports_image_detail_original": "false"}]
    named = tools_spec._variant_names(long, "view_image", by_field)
    assert named == ["view_image.supports_image_detail_original", "view_image.no-supports_image_detail_original"]
    # A field unrelated to the tool that happens to pick the same models names nothing: counted instead.
    assert tools_spec._variant_names(long, "view_image", [{"comp_hash": "2911"}, {"comp_hash": "3000"}]) == \
        ["view_image.parameters1", "view_image.parameters2"]


def test_a_model_no_single_layout_fits_gets_one_per_shape():
    from promptspec.oracle import parts
    from promptspec.oracle.capture import Config

    def body(*messages):
        items = [{"type": "message", "role": role, "content": [{"type": "input_text", "text": t} for t in texts]}
                 for role, texts in messages]
        items.append({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]})
        return {"model": "a", "instructions": "Base.", "input": items}

    ro = Config("a", sandbox_mode="read-only")
    ww = Config("a", sandbox_mode="workspace-write")
    parsed = {ro: parts.parse(body(("developer", ["<permissions instructions>\nx\n</permissions instructions>"])), "hello"),
              ww: parts.parse(body(("developer", ["<permissions instructions>\nx\n</permissions instructions>"]),
                                   ("user", ["<environment_context>y</environment_context>"])), "hello")}
    layouts = write_spec._layouts(["a"], [ro, ww], parsed)
    assert set(layouts) == {("a", (("sandbox_mode", ("read-only",)),)), ("a", (("sandbox_mode", ("workspace-write",)),))}
    entries = write_spec._layout_entries(conditions.Catalog({"models": [{"slug": "a"}]}, ["a"]), layouts)
    assert [e["when"] for e in entries] == [{"model": "a", "sandbox_mode": "read-only"}, {"model": "a", "sandbox_mode": "workspace-write"}]
    assert [len(e["messages"]) for e in entries] == [1, 2]


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
