"""`exact:` entries: a part stated outright for the cells a `when` matches,
over what the rules give (instructions, a fragment's body, a tool, a parameter),
and the one-line refusals of entries that name nothing real."""

from __future__ import annotations

import json

import pytest

from promptspec.assemble import assemble, matrix, responses_payload
from promptspec.errors import SpecError
from promptspec.spec import load_spec

MODELS = [
    {"slug": "m1", "context_window": 100000, "base_instructions": "Base one.\n", "shell_type": "shell_command",
     "default_reasoning_level": "medium"},
    {"slug": "m2", "context_window": 100000, "base_instructions": "Base two.\n", "shell_type": "unified_exec"},
]
SEARCH = {"type": "web_search", "external_web_access": False}
FRAGMENTS = {"env": {"role": "user", "slot": "environment_context", "start": "<env>", "end": "</env>",
                     "text": "cwd={{ cwd }}"}}


def make(make_spec, exact, **extra):
    files = {"tools/web_search.yaml": json.dumps({"definition": SEARCH}),
             "exact/m2-friendly.md": "Exactly this for m2, at {{ cwd }}.\n",
             "exact/env.md": "stated cwd {{ cwd }}"}
    spec = {"personalities": {"default": {}, "friendly": {}}, "modes": {"default": {}},
            "scenario": {"cwd": "/w"}, "exact": exact, **extra}
    return load_spec(make_spec(spec=spec, models=MODELS, fragments=FRAGMENTS, files=files))


def payloads(spec):
    return {v.id: responses_payload(assemble(spec, v)) for v in matrix(spec)}


def test_instructions_stated_for_the_cells_the_when_matches(make_spec):
    s = make(make_spec, [{"part": "instructions", "when": {"model": "m2", "personality": "friendly"},
                          "file": "exact/m2-friendly.md", "why": "no catalog field holds it"}])
    got = payloads(s)
    assert got["m2/friendly/default"]["instructions"] == "Exactly this for m2, at /w.\n"
    assert got["m2/default/default"]["instructions"] == "Base two.\n"
    assert got["m1/friendly/default"]["instructions"] == "Base one.\n"
    v = next(v for v in matrix(s) if v.id == "m2/friendly/default")
    base = assemble(s, v).base
    assert base.rule == "exact" and "exact[0]: no catalog field holds it" in base.detail
    assert any(ref.path.endswith("exact/m2-friendly.md") for ref in base.sources)


def test_fragment_tool_and_param_by_catalog_field(make_spec):
    s = make(make_spec, [
        {"part": "fragment env", "when": {"shell_type": "unified_exec"}, "file": "exact/env.md"},
        {"part": "tool web_search", "when": {"model": "m1"}, "value": {"type": "web_search", "external_web_access": True}},
        {"part": "tool web_search", "when": {"model": "m2", "personality": "friendly"}, "value": None},
        {"part": "param reasoning", "when": {"model": "m1", "personality": "friendly"}, "value": None},
        {"part": "param tool_choice", "when": {"model": "m2"}, "value": "required"},
    ])
    got = payloads(s)
    env = lambda vid: [i for i in got[vid]["input"] if "<env>" in json.dumps(i)][0]["content"][0]["text"]
    assert env("m2/default/default") == "<env>stated cwd /w</env>"
    assert env("m1/default/default") == "<env>cwd=/w</env>"
    assert got["m1/default/default"]["tools"] == [{"type": "web_search", "external_web_access": True}]
    assert got["m2/default/default"]["tools"] == [SEARCH]
    assert got["m2/friendly/default"]["tools"] == []
    assert "reasoning" in got["m1/default/default"] and "reasoning" not in got["m1/friendly/default"]
    assert got["m2/default/default"]["tool_choice"] == "required" and got["m1/default/default"]["tool_choice"] == "auto"


def test_first_matching_entry_decides(make_spec):
    s = make(make_spec, [{"part": "param tool_choice", "when": {"model": "m1"}, "value": "none"},
                         {"part": "param tool_choice", "value": "required"}])
    got = payloads(s)
    assert got["m1/default/default"]["tool_choice"] == "none"
    assert got["m2/default/default"]["tool_choice"] == "required"


@pytest.mark.parametrize("entry, message", [
    ({"part": "fragment nope", "file": "exact/env.md"}, "names fragment 'nope'"),
    ({"part": "tool nope", "value": None}, "names tool 'nope'"),
    ({"part": "param nope", "value": 1}, "parameter 'nope' is not in the body order"),
    ({"part": "param instructions", "value": "x"}, "is filled by assembly"),
    ({"part": "instructions", "file": "exact/missing.md"}, "missing.md"),
    ({"part": "instructions", "value": "x"}, "takes its text from 'file:'"),
    ({"part": "tool web_search"}, "needs 'value:'"),
    ({"part": "everything", "file": "exact/env.md"}, "expected 'instructions'"),
    ({"part": "instructions", "when": {"colour": "red"}, "file": "exact/env.md"}, "neither an axis nor a field"),
    ({"part": "tool web_search", "value": {"name": "x"}}, "must be a tool definition"),
])
def test_bad_entries_are_one_line_with_the_file(make_spec, entry, message):
    with pytest.raises(SpecError) as err:
        make(make_spec, [entry])
    assert message in str(err.value) and "spec.yaml" in str(err.value)
