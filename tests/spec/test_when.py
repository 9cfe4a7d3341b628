"""One condition grammar (`When`) for every place a spec says "for these
variants": fragments, tools, layouts, request rules, tool placements and matrix
include/exclude.  The same condition must select the same variants wherever it
is written, and a name that is neither an axis nor a model field must be the
same load error everywhere."""

from __future__ import annotations

import pytest

from promptspec.assemble import assemble, matrix, responses_payload
from promptspec.errors import SpecError
from promptspec.spec import load_spec
from promptspec.spec.model import BUILTIN_NAMES, When

MODELS = [
    {"slug": "m1", "context_window": 100000, "base_instructions": "Base one.\n", "shell_type": "shell_command",
     "supports_parallel_tool_calls": True, "priority": 3},
    {"slug": "m2", "context_window": 100000, "base_instructions": "Base two.\n", "shell_type": "unified_exec",
     "supports_parallel_tool_calls": False, "priority": 12},
]
SPEC = {"personalities": {"default": {}}, "modes": {"default": {}, "plan": {}}, "axes": {"sandbox": ["rw", "ro"]}}
TOOL = "definition:\n  type: function\n  name: shell\n  description: Runs one command.\n  parameters: {type: object}\n"

# Conditions over an axis, a string model field, a boolean field (YAML true),
# a number field (YAML 12), a pattern, and two names at once.
CONDITIONS = [
    {"mode": "plan"},
    {"shell_type": "shell_command"},
    {"supports_parallel_tool_calls": True},
    {"priority": 12},
    {"shell_type": "unified_*"},
    {"sandbox": ["ro"], "supports_parallel_tool_calls": [False]},
]


def expected(s, when: dict) -> set[str]:
    """The variants a condition means, computed from the catalog and the axes
    directly (not through When), as a person reading the spec would."""
    fields = {m["slug"]: m for m in MODELS}
    out = set()
    for v in matrix(s):
        ok = True
        for name, want in when.items():
            wants = want if isinstance(want, list) else [want]
            if name in ("model", "personality", "mode", "sandbox"):
                have = v.value(name)
                ok &= any(have == w or (w.endswith("*") and have.startswith(w[:-1])) for w in wants)
            else:
                have = fields[v.model][name]
                ok &= any(have == w or (isinstance(w, str) and w.endswith("*") and str(have).startswith(w[:-1]))
                          for w in wants)
        if ok:
            out.add(v.id)
    return out


@pytest.mark.parametrize("when", CONDITIONS, ids=lambda w: ",".join(w))
def test_a_condition_selects_the_same_variants_everywhere(make_spec, when):
    import yaml

    cond = yaml.safe_dump(when, default_flow_style=True).strip()
    root = make_spec(
        spec={**SPEC, "layouts": [{"when": when, "messages": [{"role": "developer", "slots": ["note"]},
                                                              {"role": "developer", "slots": ["other"]}]},
                                  {"messages": [{"role": "developer", "slots": ["note", "other"]}]}],
              "layout": {"tools": [{"when": when, "place": "input"}, {"place": "field"}]},
              "request": {"rules": [{"when": when, "params": {"store": True}}]}},
        models=MODELS,
        fragments={"note": {"role": "developer", "slot": "note", "text": "A note.", "when": when},
                   "always": {"role": "developer", "slot": "other", "text": "Always."}},
        files={"tools/shell.yaml": TOOL + f"when: {cond}\n"},
    )
    s = load_spec(root)
    want = expected(s, when)
    assert want and want != {v.id for v in matrix(s)}, "each condition must split the matrix"
    by_place: dict[str, set[str]] = {"fragment": set(), "tool": set(), "layout": set(), "placement": set(), "request": set()}
    for v in matrix(s):
        r = assemble(s, v)
        body = responses_payload(r)
        if any(sec.fragment == "note" for _, _, sec in r.sections):
            by_place["fragment"].add(v.id)
        if r.tools:
            by_place["tool"].add(v.id)
        if sum(item.get("role") == "developer" for item in body["input"] if item.get("type") == "message") == 2:
            by_place["layout"].add(v.id)
        if any(item.get("type") == "additional_tools" for item in body["input"]):
            by_place["placement"].add(v.id)
        if body.get("store") is True:
            by_place["request"].add(v.id)
    assert by_place == {place: want for place in by_place}
    # The matrix rules read the same grammar (without the `when:` key).
    kept = {v.id for v in matrix(load_spec(make_spec(name="incl", spec={**SPEC, "matrix": {"include": [when]}}, models=MODELS)))}
    dropped = {v.id for v in matrix(load_spec(make_spec(name="excl", spec={**SPEC, "matrix": {"exclude": [when]}}, models=MODELS)))}
    assert kept == want
    assert dropped == {v.id for v in matrix(s)} - want


@pytest.mark.parametrize("place", ["fragment", "tool", "layout", "placement", "request", "include"])
def test_an_unknown_name_is_one_load_error_everywhere(make_spec, place):
    bad = {"colour": "red"}
    spec = dict(SPEC)
    fragments = {"note": {"role": "developer", "slot": "permissions", "text": "A note."}}
    files = {}
    if place == "fragment":
        fragments["note"]["when"] = bad
    elif place == "tool":
        files["tools/shell.yaml"] = TOOL + "when: {colour: red}\n"
    elif place == "layout":
        spec["layouts"] = [{"when": bad, "messages": [{"role": "developer", "slots": ["permissions"]}]}]
    elif place == "placement":
        spec["layout"] = {"tools": [{"when": bad, "place": "input"}]}
    elif place == "request":
        spec["request"] = {"rules": [{"when": bad, "params": {"store": True}}]}
    else:
        spec["matrix"] = {"include": [bad]}
    root = make_spec(spec=spec, models=MODELS, fragments=fragments, files=files)
    with pytest.raises(SpecError, match=r"names 'colour', which is neither an axis nor a field of any model") as err:
        load_spec(root)
    assert err.value.line is not None


def test_a_derived_value_may_not_hide_any_built_in_name(make_spec):
    for name in BUILTIN_NAMES:
        root = make_spec(name=f"d-{name}", spec={"derived": {name: "x"}})
        with pytest.raises(SpecError, match=name):
            load_spec(root)


def test_when_compares_like_a_mapping_and_hashes():
    a = When({"mode": ("plan",)})
    assert a == {"mode": ("plan",)} and a == When({"mode": ["plan"]})
    assert hash(a) == hash(When({"mode": ("plan",)}))
    assert a != When({"mode": ("plan",)}, frozenset({"mode"}))
    assert not When() and When().matches(None)  # empty: always, needs nothing


PATTERNS = ["plan", "pl*", "p?an", "[pq]lan", "[!p]lan", "plan.x", "*", "", "[", "[]]", "a]", "p\\lan", "PLAN"]
VALUES = ["plan", "qlan", "plan.x", "planx", "", "[", "]", "a]", "p\\lan", "PLAN", "pl"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pattern_matches_as_fnmatchcase_does(pattern):
    """A pattern without a wildcard is compared as text and the others are
    compiled once (When._tests); either way the answer is fnmatchcase's."""
    import fnmatch

    from promptspec.assemble.request import Variant

    when = When({"mode": (pattern,)})
    for value in VALUES:
        assert when.matches(Variant("m1", "default", value)) == fnmatch.fnmatchcase(value, pattern), (pattern, value)
    both = When({"mode": (pattern, "qlan")})
    assert [both.matches(Variant("m1", "default", v)) for v in VALUES] == \
        [fnmatch.fnmatchcase(v, pattern) or v == "qlan" for v in VALUES]
