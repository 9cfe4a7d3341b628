"""The spec features real agents need beyond one fixed layout (docs/spec-format.md):
layouts per variant and where base instructions go, personality `fills` and
`removes_section`, refused values, derived values and aliases."""

from __future__ import annotations

import json

import pytest

from promptspec.assemble import Assembler, find_variant, matrix, responses_payload
from promptspec.cli import main
from promptspec.errors import SpecError, UsageError
from promptspec.spec import load_spec

TEMPLATE = "Intro.\n\n{{ personality }}\n\n# Rules\nBe brief.\n"
NO_PLACEHOLDER = "Intro.\n\n# Personality\nWarm and kind.\nVery warm.\n\n# Rules\nBe brief.\n"
MODELS = [
    {"slug": "old", "base_instructions": "unused",
     "model_messages": {"instructions_template": TEMPLATE,
                        "instructions_variables": {"personality_default": "", "personality_friendly": "FRIENDLY\n",
                                                   "personality_pragmatic": "PRAGMATIC\n"}}},
    {"slug": "new", "base_instructions": "unused", "model_messages": {"instructions_template": NO_PLACEHOLDER}},
]
PERSONALITIES = {"unset": {"fills": "pragmatic"}, "none": {"removes_section": "# Personality"}, "friendly": {}}


def _request(spec_dir, model="old", personality="unset", mode=None, **extra):
    spec = load_spec(spec_dir)
    return Assembler(spec).assemble(find_variant(spec, model, personality, mode, extra))


def test_unset_fills_the_configured_default_and_none_removes_a_section(make_spec):
    d = make_spec(spec={"personalities": PERSONALITIES}, models=MODELS)
    assert _request(d, "old", "unset").base.text == TEMPLATE.replace("{{ personality }}", "PRAGMATIC\n")
    assert _request(d, "old", "friendly").base.text == TEMPLATE.replace("{{ personality }}", "FRIENDLY\n")
    assert _request(d, "old", "none").base.text == TEMPLATE.replace("{{ personality }}", "")  # placeholder: emptied
    assert _request(d, "new", "none").base.text == "Intro.\n\n# Rules\nBe brief.\n"  # no placeholder: section cut
    assert _request(d, "new", "unset").base.text == NO_PLACEHOLDER
    assert _request(d, "new", "unset").base.detail == "no {{ personality }} placeholder to fill"
    assert _request(d, "old", "unset").base.detail == "personality_pragmatic"


def test_empty_fills_means_the_empty_string(make_spec):
    d = make_spec(spec={"personalities": {"quiet": {"fills": ""}}}, models=MODELS[:1])
    assert _request(d, "old", "quiet").base.text == TEMPLATE.replace("{{ personality }}", "")


def test_removes_section_must_be_a_heading(make_spec):
    d = make_spec(spec={"personalities": {"none": {"removes_section": "Personality"}}}, models=MODELS)
    with pytest.raises(SpecError, match="heading line"):
        load_spec(d)


LAYOUTS = [
    {"when": {"model": ["new"]}, "instructions": "section",
     "messages": [{"role": "developer", "slots": ["base_instructions"]},
                  {"role": "developer", "slots": ["extra", "perm"]},
                  {"role": "user", "slots": ["env"]}]},
    {"messages": [{"role": "developer", "slots": ["perm", "extra"]}, {"role": "user", "slots": ["env"]}]},
]
FRAGMENTS = {
    "base_instructions": {"role": "developer", "slot": "base_instructions", "text": "{{ base.text }}"},
    "perm": {"role": "developer", "slot": "perm", "text": "P"},
    "extra": {"role": "developer", "slot": "extra", "text": "X"},
    "env": {"role": "user", "slot": "env", "text": "E"},
}


def test_layouts_choose_messages_and_where_instructions_go(make_spec):
    d = make_spec(spec={"personalities": PERSONALITIES, "layouts": LAYOUTS}, models=MODELS, fragments=FRAGMENTS)
    old = responses_payload(_request(d, "old"))
    assert old["instructions"].startswith("Intro.")
    assert [[c["text"] for c in m["content"]] for m in old["input"]] == [["P", "X"], ["E"]]
    new = responses_payload(_request(d, "new"))
    assert "instructions" not in new
    assert [(m["role"], [c["text"] for c in m["content"]]) for m in new["input"]] == [
        ("developer", [NO_PLACEHOLDER]), ("developer", ["X", "P"]), ("user", ["E"])]


def test_instructions_sent_as_a_section_are_counted_once(make_spec, capsys):
    d = make_spec(spec={"personalities": PERSONALITIES, "layouts": LAYOUTS}, models=MODELS, fragments=FRAGMENTS)
    assert main(["render", "--spec", str(d), "--model", "new", "--personality", "unset", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    tokens = data["tokens"]
    assert tokens["instructions"]["tokens"] == 0
    # Once: the total is the messages' sections (the instructions among them) and the tools, nothing more,
    # and the sections' counts are those of the texts the body sends.
    assert tokens["total"] == sum(m["tokens"] for m in tokens["messages"]) + tokens["tools"]["tokens"] > 0
    from promptspec.measure.encodings import encoding_for_model, get_encoding

    enc = get_encoding(encoding_for_model(data["model"]))  # the spec maps no encodings
    sent = [c["text"] for m in data["input"] for c in m["content"]]
    assert sum(m["tokens"] for m in tokens["messages"]) == sum(len(enc.encode_ordinary(t)) for t in sent)


@pytest.mark.parametrize("bad, message", [
    ([{"messages": [{"role": "system", "slots": ["a"]}]}], "role must be"),
    ([{"messages": [{"role": "developer", "slots": ["a", "a"]}]}], "appears twice"),
    ([{"when": {"colour": ["x"]}, "messages": [{"role": "developer", "slots": ["a"]}]}], "neither an axis nor a field"),
    ([{"instructions": "header", "messages": [{"role": "developer", "slots": ["a"]}]}], "'field' or 'section'"),
    ([{"messages": [{"role": "developer", "slots": ["a"]}]}, {"messages": [{"role": "user", "slots": ["a"]}]}], "one role"),
    ([], "is empty"),
])
def test_bad_layouts_are_one_line_errors(make_spec, bad, message):
    d = make_spec(spec={"layouts": bad})
    with pytest.raises(SpecError, match=message) as err:
        load_spec(d)
    assert "\n" not in err.value.oneline() and "spec.yaml" in err.value.oneline()


def test_a_variant_no_layout_matches_is_an_error(make_spec):
    d = make_spec(spec={"layouts": [{"when": {"model": ["other"]}, "messages": [{"role": "user", "slots": ["env"]}]}]},
                  fragments={"env": FRAGMENTS["env"]})
    with pytest.raises(SpecError, match="no layout matches variant"):
        _request(d, "m1", "default")


SHAPED = {
    "axes": {"sandbox_mode": ["read-only", "workspace-write", "danger-full-access"],
             "approval_policy": ["on-failure", "on-request"]},
    "refuse": {"approval_policy": {"untrusted": "Agent 2.0 refuses it (no longer supported)"}},
    "aliases": {"approval_policy": {"on-failure": "on-request"}},
    "derived": {"network_access": "{{ 'enabled' if sandbox_mode == 'danger-full-access' else 'restricted' }}",
                "roots": "{{ ([cwd, '/tmp'] | sort | join(', ')) if sandbox_mode == 'workspace-write' else '' }}"},
    "scenario": {"cwd": "/home/u/project"},
}
SHAPED_FRAGMENTS = {"perm": {"role": "developer", "slot": "permissions",
                             "text": "{{ sandbox_mode }} {{ approval_policy }} net={{ network_access }} roots={{ roots }}"}}


def _perm(d, **axes):
    return _request(d, "m1", "default", None, **axes).messages[0].sections[0].text


def test_derived_values_follow_their_inputs(make_spec):
    d = make_spec(spec=SHAPED, fragments=SHAPED_FRAGMENTS)
    assert _perm(d, sandbox_mode="danger-full-access", approval_policy="on-request").endswith("net=enabled roots=")
    assert _perm(d, sandbox_mode="workspace-write", approval_policy="on-request").endswith(
        "net=restricted roots=/home/u/project, /tmp")


def test_an_alias_renders_as_the_value_it_stands_for(make_spec):
    d = make_spec(spec=SHAPED, fragments=SHAPED_FRAGMENTS)
    assert _perm(d, sandbox_mode="read-only", approval_policy="on-failure").startswith("read-only on-request ")
    # ...while the variant keeps its own name.
    assert "m1/default/default/read-only/on-failure" in {v.id for v in matrix(load_spec(d))}


def test_a_refused_value_says_why(make_spec, capsys):
    d = make_spec(spec=SHAPED, fragments=SHAPED_FRAGMENTS)
    with pytest.raises(UsageError, match="Agent 2.0 refuses it"):
        _perm(d, sandbox_mode="read-only", approval_policy="untrusted")
    assert main(["render", "--spec", str(d), "--axis", "approval_policy=untrusted"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Agent 2.0 refuses it" in err


@pytest.mark.parametrize("change, message", [
    ({"refuse": {"approval_policy": {"on-request": "no"}}}, "also a value of the axis"),
    ({"aliases": {"approval_policy": {"always": "on-request"}}}, "not a value of the axis"),
    ({"derived": {"cwd": "{{ 'x' }}"}}, "would hide"),
    ({"derived": {"model": "{{ 'x' }}"}}, "would hide"),
])
def test_bad_shaping_keys_are_one_line_errors(make_spec, change, message):
    d = make_spec(spec={**SHAPED, **change}, fragments=SHAPED_FRAGMENTS)
    with pytest.raises(SpecError, match=message):
        load_spec(d)


def test_a_derived_cycle_is_an_error(make_spec):
    d = make_spec(spec={**SHAPED, "derived": {"a": "{{ b }}", "b": "{{ a }}"}},
                  fragments={"perm": {"role": "developer", "slot": "permissions", "text": "{{ a }}"}})
    with pytest.raises(SpecError, match="depends on itself"):
        _perm(d, sandbox_mode="read-only", approval_policy="on-request")


def test_lint_knows_derived_names(make_spec, capsys):
    d = make_spec(spec=SHAPED, fragments=SHAPED_FRAGMENTS)
    assert main(["lint", "--spec", str(d)]) == 0, capsys.readouterr().out
