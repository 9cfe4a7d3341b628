"""Tool definitions and request parameters as spec data: loading, selection,
placement (field, input item, deferred section) and the body's key order."""

from __future__ import annotations

import json

import pytest

from promptspec.assemble import assemble, body_json, layout, matrix, responses_payload, tools_json
from promptspec.errors import SpecError
from promptspec.spec import load_spec

SHELL = {
    "type": "function",
    "name": "shell",
    "description": "Runs one command.",
    "strict": False,
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string", "description": "The command."}}, "required": ["cmd"]},
}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Edits files.", "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}}
SEARCH = {"type": "web_search", "external_web_access": False}
NS = {"type": "namespace", "name": "jobs", "description": "Tools for background jobs.", "tools": [dict(SHELL, name="start_job")]}

MODELS = [
    {"slug": "m1", "context_window": 100000, "base_instructions": "Base.\n", "shell_type": "shell_command",
     "default_reasoning_level": "medium", "default_verbosity": "low", "support_verbosity": True, "supports_parallel_tool_calls": True},
    {"slug": "m2", "context_window": 100000, "base_instructions": "Base 2.\n", "shell_type": "unified_exec", "use_responses_lite": True},
]


def tool_file(definition, **meta):
    import yaml

    return yaml.safe_dump({**meta, "definition": definition}, sort_keys=False)


@pytest.fixture
def tool_spec(make_spec):
    def make(spec=None, tools=None, fragments=None, json_tools=None, models=MODELS):
        files = {f"tools/{name}.yaml": tool_file(d, **meta) for name, (d, meta) in (tools or {}).items()}
        files.update({f"tools/{name}.json": text for name, text in (json_tools or {}).items()})
        return make_spec(spec={"personalities": {"default": {}}, "modes": {"default": {}}, **(spec or {})}, models=models, fragments=fragments, files=files)

    return make


def by_id(s, vid):
    return next(v for v in matrix(s) if v.id == vid)


def req(spec, model="m1"):
    s = load_spec(spec)
    return assemble(s, by_id(s, f"{model}/default/default"))


def test_definition_is_kept_verbatim_with_key_order(tool_spec):
    weird = {"type": "function", "zeta": 1, "name": "z", "alpha": {"b": 2, "a": 1}, "parameters": {"type": "object", "properties": {}}}
    r = req(tool_spec(tools={"z": (weird, {})}))
    assert tools_json(r) == json.dumps([weird], separators=(",", ":"))
    assert list(responses_payload(r)["tools"][0]) == ["type", "zeta", "name", "alpha", "parameters"]


def test_json_tool_file_keeps_unicode_and_order(tool_spec):
    text = '{"description": "x", "definition": {"type": "function", "name": "é", "description": "naïve → ok", "parameters": {"type": "object"}}}\n'
    r = req(tool_spec(json_tools={"uni": text}))
    assert tools_json(r) == '[{"type":"function","name":"é","description":"naïve → ok","parameters":{"type":"object"}}]'


def test_when_selects_by_model_field_and_axis(tool_spec):
    spec = tool_spec(
        spec={"axes": {"sandbox": ["rw", "ro"]}},
        tools={
            "shell": (SHELL, {"when": {"shell_type": "shell_command"}}),
            "patch": (PATCH, {"when": {"sandbox": ["rw"]}}),
            "search": (SEARCH, {"when": {"supports_parallel_tool_calls": True}}),
        },
    )
    s = load_spec(spec)
    names = {v.id: [t.tool_name for t in assemble(s, v).tools] for v in matrix(s)}
    assert names == {
        "m1/default/default/rw": ["apply_patch", "web_search", "shell"],
        "m1/default/default/ro": ["web_search", "shell"],
        "m2/default/default/rw": ["apply_patch"],
        "m2/default/default/ro": [],
    }


def test_tools_order_list_sets_send_order(tool_spec):
    spec = tool_spec(spec={"tools": {"order": ["shell", "search"]}}, tools={"a_patch": (PATCH, {}), "shell": (SHELL, {}), "search": (SEARCH, {})})
    assert [t.name for t in req(spec).tools] == ["shell", "search", "a_patch"]


def test_placement_field(tool_spec):
    body = responses_payload(req(tool_spec(tools={"shell": (SHELL, {})})))
    assert body["tools"] == [SHELL]
    assert all(item["type"] == "message" for item in body["input"])


def test_placement_input_item_comes_first(tool_spec):
    spec = tool_spec(
        spec={"layout": {"tools": [{"when": {"use_responses_lite": True}, "place": "input"}, {"place": "field"}]}},
        tools={"shell": (SHELL, {}), "ns": (NS, {})},
        fragments={"note": {"role": "developer", "slot": "permissions", "text": "hi"}},
    )
    lite = responses_payload(req(spec, "m2"))
    assert "tools" not in lite
    assert lite["input"][0] == {"type": "additional_tools", "role": "developer", "tools": [NS, SHELL]}
    assert lite["input"][1]["type"] == "message"
    assert layout(req(spec, "m2")).startswith("00:additional_tools/developer[2]: [01] jobs [02] shell\n01:message/developer")
    plain = responses_payload(req(spec, "m1"))
    assert plain["tools"] == [NS, SHELL]


def test_placement_deferred_section(tool_spec):
    spec = tool_spec(
        tools={"shell": (SHELL, {}), "jobs": (NS, {"deferred": True})},
        fragments={
            "tools_section": {
                "role": "developer", "slot": "token_budget", "start": "<tools>\n", "end": "</tools>",
                "text": "{% if tools.deferred %}Deferred tool namespaces:\n{% for t in tools.deferred %}- {{ t.name }}: {{ t.description }}\n{% endfor %}{% endif %}",
            }
        },
    )
    r = req(spec)
    assert [t.tool_name for t in r.tools] == ["shell"] and [t.tool_name for t in r.deferred] == ["jobs"]
    body = responses_payload(r)
    assert body["tools"] == [SHELL]
    assert body["input"][0]["content"][-1]["text"] == "<tools>\nDeferred tool namespaces:\n- jobs: Tools for background jobs.\n</tools>"


def test_default_params_follow_the_catalog(tool_spec):
    body = responses_payload(req(tool_spec()))
    assert list(body) == ["model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store", "stream", "include", "text"]
    assert body["reasoning"] == {"effort": "medium"} and body["text"] == {"verbosity": "low"}
    assert body["parallel_tool_calls"] is True and body["include"] == ["reasoning.encrypted_content"]
    bare = responses_payload(req(tool_spec(), "m2"))
    assert "reasoning" not in bare and "text" not in bare and bare["parallel_tool_calls"] is False


def test_request_order_params_and_rules(tool_spec):
    order = ["model", "stream", "input", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store", "include", "prompt_cache_key", "text"]
    spec = tool_spec(spec={"request": {
        "order": order,
        "params": {"prompt_cache_key": "fixed-key"},
        "rules": [{"when": {"model": "m1"}, "params": {"reasoning": {"context": "all_turns"}, "text": None, "parallel_tool_calls": False}}],
    }})
    body = responses_payload(req(spec))
    assert list(body) == [k for k in order if k != "text"]
    assert body["reasoning"] == {"effort": "medium", "context": "all_turns"}
    assert body["prompt_cache_key"] == "fixed-key" and body["parallel_tool_calls"] is False
    assert json.loads(body_json(req(spec))) == body


@pytest.mark.parametrize(
    "spec, tools, message",
    [
        ({"tools": {"order": ["nope"]}}, {"shell": (SHELL, {})}, r"spec\.yaml:\d+: tools\.order names tool 'nope'"),
        ({}, {"shell": (dict(SHELL, parameters="x"), {})}, r"tools/shell\.yaml:\d+: the parameters schema of function tool 'shell' must be an object"),
        ({"tools": {"description_budget": 5}}, {"shell": (SHELL, {})}, r"tools/shell\.yaml:\d+: the description of tool 'shell' has 17 characters, over the budget of 5"),
        ({}, {"shell": (SHELL, {"when": {"colour": "x"}})}, r"tools/shell\.yaml:\d+: 'when' names 'colour'"),
        ({"request": {"params": {"tools": []}}}, {}, r"spec\.yaml:\d+: 'tools' is filled by assembly"),
        ({"request": {"params": {"temperature": 1}}}, {}, r"spec\.yaml:\d+: parameter 'temperature' is not in the body order"),
        ({"layout": {"tools": "sideways"}}, {}, r"spec\.yaml:\d+: tool placement must be one of field, input"),
    ],
)
def test_bad_tool_input_names_file_and_line(tool_spec, spec, tools, message):
    with pytest.raises(SpecError) as exc:
        load_spec(tool_spec(spec=spec, tools=tools))
    assert exc.value.line is not None
    import re

    assert re.search(message, str(exc.value)), str(exc.value)


def test_duplicate_tool_name_in_one_variant(tool_spec):
    spec = tool_spec(tools={"a": (SHELL, {}), "b": (SHELL, {"when": {"model": "m1"}})})
    s = load_spec(spec)
    assert [t.tool_name for t in assemble(s, by_id(s, "m2/default/default")).tools] == ["shell"]
    with pytest.raises(SpecError, match=r"tool name 'shell' is sent twice in variant m1/default/default \(also by tools/a\.yaml\)"):
        assemble(s, by_id(s, "m1/default/default"))
