"""Assembly: order, markers, base instructions, AGENTS.md, matrix, when/requires.

Each test builds a small spec in tmp_path (see conftest.make_spec) so the
expected request can be written out by hand, byte for byte.
"""

from __future__ import annotations

import pytest

from promptspec.assemble import agents_md
from promptspec.assemble.builder import Assembler, assemble, base_instructions
from promptspec.assemble.request import Variant
from promptspec.assemble.matrix import find_variant, matrix
from promptspec.errors import SpecError, UsageError
from promptspec.spec.readers.load import load_spec


def frag(slot: str, text: str, *, role: str = "developer", start: str = "", end: str = "", **extra):
    return {"role": role, "slot": slot, "start": start, "end": end, "text": text, **extra}


def one_mode_spec(**spec):
    """Single personality and mode, so `matrix` has one variant per model."""
    return {"personalities": {"default": {}}, "modes": {"default": {}}, **spec}


def layout_of(request):
    return [(m.role, [s.fragment for s in m.sections]) for m in request.messages]


# ---------------------------------------------------------------------------
# Order


def test_sections_follow_layout_order_not_file_order(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={
            # Names sort opposite to the layout, so file order cannot explain the result.
            "a_env": frag("environment_context", "E", role="user"),
            "b_agents": frag("agents_md", "A", role="user"),
            "c_plugins": frag("plugins", "P"),
            "d_collab": frag("collaboration_mode", "C"),
            "e_devinst": frag("developer_instructions", "D"),
            "f_perms": frag("permissions", "X"),
            "g_switch": frag("model_switch", "S"),
            "h_separate": frag("separate_developer", "Z"),
        },
    )
    spec = load_spec(root)
    request = assemble(spec, matrix(spec)[0])
    assert layout_of(request) == [
        ("developer", ["g_switch", "f_perms", "e_devinst", "d_collab", "c_plugins"]),
        ("developer", ["h_separate"]),
        ("user", ["b_agents", "a_env"]),
    ]


def test_each_separate_developer_section_is_its_own_message(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={
            "one": frag("separate_developer", "1"),
            "two": frag("separate_developer", "2"),
            "perm": frag("permissions", "P"),
            "env": frag("environment_context", "E", role="user"),
        },
    )
    spec = load_spec(root)
    request = assemble(spec, matrix(spec)[0])
    assert layout_of(request) == [
        ("developer", ["perm"]),
        ("developer", ["one"]),
        ("developer", ["two"]),
        ("user", ["env"]),
    ]
    assert [m.text for m in request.messages] == ["P", "1", "2", "E"]


def test_fragments_sharing_a_slot_sort_by_order_then_name(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={
            "alpha": frag("developer_extensions", "a", order=2),
            "beta": frag("developer_extensions", "b", order=1),
            "gamma": frag("developer_extensions", "c", order=1),
        },
    )
    spec = load_spec(root)
    assert layout_of(assemble(spec, matrix(spec)[0])) == [("developer", ["beta", "gamma", "alpha"])]


def test_custom_layout_reorders_slots(make_spec):
    root = make_spec(
        spec=one_mode_spec(layout={"developer": ["skills", "permissions"], "user": ["environment_context"]}),
        fragments={
            "perm": frag("permissions", "P"),
            "skills": frag("skills", "S"),
            "env": frag("environment_context", "E", role="user"),
        },
    )
    spec = load_spec(root)
    assert layout_of(assemble(spec, matrix(spec)[0])) == [("developer", ["skills", "perm"]), ("user", ["env"])]


def test_request_keeps_variant_model_and_base(make_spec):
    spec = load_spec(make_spec(spec=one_mode_spec(), fragments={"p": frag("permissions", "P")}))
    v = matrix(spec)[0]
    request = assemble(spec, v)
    assert request.variant == v and request.model == "m1"
    assert request.base.text == "Base instructions of m1.\n"


# ---------------------------------------------------------------------------
# Markers


def test_section_is_start_body_end_with_nothing_added(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={
            "tight": frag("permissions", "body", start="<a>", end="</a>"),
            "spaced": frag("apps", "\n  inner\n\n", start="<b x>", end="</b x>"),
        },
    )
    spec = load_spec(root)
    sections = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert [s.text for s in sections] == ["<a>body</a>", "<b x>\n  inner\n\n</b x>"]
    assert (sections[0].start, sections[0].body, sections[0].end) == ("<a>", "body", "</a>")


def test_no_markers_gives_the_bare_body(make_spec):
    spec = load_spec(make_spec(spec=one_mode_spec(), fragments={"raw": frag("developer_instructions", "  just this \n")}))
    (section,) = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert section.text == "  just this \n"


def test_empty_body_omits_the_section_and_its_markers(make_spec):
    root = make_spec(
        spec=one_mode_spec(scenario={"flag": False}),
        fragments={
            "empty": frag("permissions", "{% if flag %}x{% endif %}", start="<p>", end="</p>"),
            "kept": frag("apps", "y", start="<a>", end="</a>"),
        },
    )
    spec = load_spec(root)
    request = assemble(spec, matrix(spec)[0])
    assert layout_of(request) == [("developer", ["kept"])]
    assert "<p>" not in request.messages[0].text


def test_message_with_no_sections_is_not_emitted(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={
            "dev": frag("permissions", "P"),
            "blank_user": frag("environment_context", "{{ '' }}", role="user", start="<e>", end="</e>"),
        },
    )
    spec = load_spec(root)
    request = assemble(spec, matrix(spec)[0])
    assert [m.role for m in request.messages] == ["developer"]


def test_whitespace_body_is_not_empty(make_spec):
    """Only a body that renders to "" is dropped; a newline is content."""
    spec = load_spec(make_spec(spec=one_mode_spec(), fragments={"nl": frag("permissions", "\n", start="<p>", end="</p>")}))
    (section,) = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert section.text == "<p>\n</p>"


def test_markers_may_use_scenario_values(make_spec):
    root = make_spec(
        spec=one_mode_spec(scenario={"tag": "ctx"}),
        fragments={"t": frag("permissions", "b", start="<{{ tag }}>", end="</{{ tag }}>")},
    )
    spec = load_spec(root)
    (section,) = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert section.text == "<ctx>b</ctx>"


# ---------------------------------------------------------------------------
# Base instructions


TEMPLATE = "Head.\n{{ personality }}\nMiddle {{ personality }}.\nNot {{personality}} replaced.\n"
VARIABLES = {
    "personality_default": "DEFAULT-TEXT",
    "personality_friendly": "FRIENDLY-TEXT",
    "personality_pragmatic": "PRAGMATIC-TEXT",
}


def templated_model(slug="t1", variables=VARIABLES, template=TEMPLATE):
    return {
        "slug": slug,
        "base_instructions": "IGNORED when a template exists\n",
        "model_messages": {"instructions_template": template, "instructions_variables": variables},
    }


@pytest.mark.parametrize(
    "personality, expected, detail",
    [
        ("default", "DEFAULT-TEXT", "personality_default"),
        ("none", "", "none"),
        ("friendly", "FRIENDLY-TEXT", "personality_friendly"),
        ("pragmatic", "PRAGMATIC-TEXT", "personality_pragmatic"),
    ],
)
def test_template_rule_replaces_every_placeholder_plainly(make_spec, personality, expected, detail):
    spec = load_spec(make_spec(models=[templated_model()]))
    base = base_instructions(spec, spec.model("t1"), personality)
    assert base.rule == "template" and base.detail == detail
    # Every exact "{{ personality }}" is replaced; the unspaced form is left alone (plain replacement).
    assert base.text == f"Head.\n{expected}\nMiddle {expected}.\nNot {{{{personality}}}} replaced.\n"


def test_template_rule_with_missing_or_null_variables_gives_empty_text(make_spec):
    variables = {"personality_friendly": None}
    spec = load_spec(make_spec(models=[templated_model(variables=variables, template="[{{ personality }}]")]))
    model = spec.model("t1")
    for personality in ("default", "none", "friendly", "pragmatic"):
        assert base_instructions(spec, model, personality).text == "[]", personality


def test_template_without_placeholder_is_sent_unchanged(make_spec):
    spec = load_spec(make_spec(models=[templated_model(template="Fixed text.\n")]))
    assert base_instructions(spec, spec.model("t1"), "friendly").text == "Fixed text.\n"


@pytest.mark.parametrize("messages", [None, "absent"])
def test_base_instructions_rule_without_template(make_spec, messages):
    model = {"slug": "plain", "base_instructions": "Plain {{ personality }} text.\n"}
    if messages is None:
        model["model_messages"] = None
    spec = load_spec(make_spec(models=[model]))
    for personality in ("default", "none", "friendly", "pragmatic"):
        base = base_instructions(spec, spec.model("plain"), personality)
        assert (base.rule, base.text) == ("base_instructions", "Plain {{ personality }} text.\n")


def test_override_wins_over_template_and_base(make_spec):
    root = make_spec(
        spec={"instructions_override": "override.md"},
        models=[templated_model(), {"slug": "plain", "base_instructions": "B"}],
        files={"override.md": "Overridden {{ personality }}.\n"},
    )
    spec = load_spec(root)
    for slug in ("t1", "plain"):
        base = base_instructions(spec, spec.model(slug), "friendly")
        assert (base.rule, base.text, base.detail) == ("override", "Overridden {{ personality }}.\n", "override.md")


def test_base_is_visible_to_templates(make_spec):
    root = make_spec(
        spec=one_mode_spec(personalities={"friendly": {}}),
        models=[templated_model()],
        fragments={"b": frag("permissions", "{{ base.rule }}:{{ base.detail }}")},
    )
    spec = load_spec(root)
    (section,) = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert section.text == "template:personality_friendly"


# ---------------------------------------------------------------------------
# AGENTS.md discovery


def agents_spec(make_spec, files, *, cwd="/repo/a/b", **agents):
    cfg = {"tree": "project", "project_root": "/repo", **agents}
    root = make_spec(
        spec=one_mode_spec(scenario={"cwd": cwd}, agents_md=cfg),
        fragments={
            "agents": {
                "role": "user",
                "slot": "agents_md",
                "requires": ["agents_md"],
                "start": "# AGENTS.md instructions for ",
                "end": "</INSTRUCTIONS>",
                "text": "{{ cwd }}\n\n<INSTRUCTIONS>\n{{ agents_md }}\n",
            }
        },
        files={"project/.keep": "", **files},
    )
    return load_spec(root)


def docs_text(spec, cwd="/repo/a/b"):
    return agents_md.discover(spec, cwd).text


def test_one_file_per_directory_override_then_agents_then_fallback(make_spec):
    spec = agents_spec(
        make_spec,
        {
            "project/AGENTS.override.md": "root override",
            "project/AGENTS.md": "root agents (hidden by the override)",
            "project/TEAM.md": "root fallback (hidden)",
            "project/a/AGENTS.md": "a agents",
            "project/a/TEAM.md": "a fallback (hidden)",
            "project/a/b/TEAM.md": "b fallback",
            "project/a/b/OTHER.md": "b second fallback (hidden)",
        },
        fallback_filenames=["TEAM.md", "OTHER.md"],
    )
    docs = agents_md.discover(spec, "/repo/a/b")
    assert docs.text == "root override\n\na agents\n\nb fallback"
    assert docs.sources == ("project/AGENTS.override.md", "project/a/AGENTS.md", "project/a/b/TEAM.md")
    assert [f.path for f in docs.files] == ["/repo/AGENTS.override.md", "/repo/a/AGENTS.md", "/repo/a/b/TEAM.md"]


def test_fallback_names_are_ignored_unless_configured(make_spec):
    spec = agents_spec(make_spec, {"project/TEAM.md": "team"})
    assert docs_text(spec) == ""


def test_walk_goes_root_down_to_cwd_only(make_spec):
    files = {
        "project/AGENTS.md": "R\n",
        "project/a/AGENTS.md": "A\n",
        "project/a/b/AGENTS.md": "B\n",
        "project/a/sibling/AGENTS.md": "not on the path",
        "project/a/b/deeper/AGENTS.md": "below the cwd",
    }
    spec = agents_spec(make_spec, files)
    # Contents are not trimmed; parts are joined with a blank line.
    assert docs_text(spec, "/repo/a/b") == "R\n\n\nA\n\n\nB\n"
    assert docs_text(spec, "/repo/a") == "R\n\n\nA\n"
    assert docs_text(spec, "/repo") == "R\n"
    assert docs_text(spec, "/elsewhere") == ""


def test_agents_section_format_in_the_request(make_spec):
    spec = agents_spec(make_spec, {"project/AGENTS.md": "Do X.\n"}, cwd="/repo/a/b")
    (section,) = [s for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert section.text == "# AGENTS.md instructions for /repo/a/b\n\n<INSTRUCTIONS>\nDo X.\n\n</INSTRUCTIONS>"


def test_no_docs_means_no_agents_section(make_spec):
    spec = agents_spec(make_spec, {})
    request = assemble(spec, matrix(spec)[0])
    assert request.messages == ()


def test_user_instructions_separator_only_with_user_instructions(make_spec):
    with_user = agents_spec(
        make_spec, {"project/AGENTS.md": "project doc", "home/AGENTS.md": "\n  user doc  \n\n"}, user_instructions="home/AGENTS.md"
    )
    assert docs_text(with_user) == "user doc\n\n--- project-doc ---\n\nproject doc"

    spec = agents_spec(make_spec, {"project/AGENTS.md": "project doc"})
    assert docs_text(spec) == "project doc"
    assert "project-doc" not in docs_text(spec)


def test_user_instructions_alone_have_no_separator(make_spec):
    spec = agents_spec(make_spec, {"home/AGENTS.md": "user doc\n"}, user_instructions="home/AGENTS.md")
    assert docs_text(spec) == "user doc"


def test_blank_user_instructions_count_as_none(make_spec):
    spec = agents_spec(make_spec, {"home/AGENTS.md": " \n\t\n", "project/AGENTS.md": "p"}, user_instructions="home/AGENTS.md")
    docs = agents_md.discover(spec, "/repo/a/b")
    assert docs.user_instructions is None and docs.text == "p"


def test_whitespace_only_file_is_skipped_and_spends_no_budget(make_spec):
    spec = agents_spec(
        make_spec,
        {
            "project/AGENTS.md": "  \n\n\t \n",
            "project/a/AGENTS.md": "12345",
        },
        max_bytes=5,
    )
    docs = agents_md.discover(spec, "/repo/a/b")
    assert docs.text == "12345"
    assert docs.sources == ("project/a/AGENTS.md",)
    assert docs.note() is None


def test_whitespace_only_file_hides_the_next_candidate_in_its_folder(make_spec):
    """Codex takes the first existing file per folder, then skips it if blank."""
    spec = agents_spec(make_spec, {"project/AGENTS.override.md": "\n\n", "project/AGENTS.md": "hidden"})
    assert docs_text(spec) == ""


def test_truncation_cuts_at_the_byte_and_reports_it(make_spec):
    spec = agents_spec(
        make_spec,
        {"project/AGENTS.md": "0123456789", "project/a/AGENTS.md": "abcdefghij", "project/a/b/AGENTS.md": "never read"},
        max_bytes=14,
    )
    docs = agents_md.discover(spec, "/repo/a/b")
    assert docs.text == "0123456789\n\nabcd"
    assert docs.truncated_bytes == 6 + 10
    assert docs.total_bytes == 30
    note = docs.note()
    assert note is not None and "14-byte" in note and "16 bytes were cut" in note
    request = assemble(spec, matrix(spec)[0])
    assert request.notes == (note,)


def test_truncation_inside_a_multibyte_character_gives_replacement_char(make_spec):
    # UTF-8 sizes: a=1, é=2, €=3, z=1 (7 bytes); a budget of 5 ends inside "€".
    spec = agents_spec(make_spec, {"project/AGENTS.md": "aé€z"}, max_bytes=5)
    docs = agents_md.discover(spec, "/repo")
    # a(1) é(2) = 3 bytes, then 2 of €'s 3 bytes: Rust's from_utf8_lossy yields one U+FFFD.
    assert docs.text == "aé\ufffd"
    assert docs.truncated_bytes == len("aé€z".encode()) - 5


def test_truncated_blank_prefix_is_skipped_like_codex(make_spec):
    """Codex tests the kept bytes for blankness, not the whole file."""
    spec = agents_spec(make_spec, {"project/AGENTS.md": "head", "project/a/AGENTS.md": "   tail"}, max_bytes=6)
    docs = agents_md.discover(spec, "/repo/a")
    assert docs.text == "head"
    assert docs.sources == ("project/AGENTS.md",)


def test_zero_budget_disables_project_docs(make_spec):
    spec = agents_spec(make_spec, {"project/AGENTS.md": "x"}, max_bytes=0)
    assert docs_text(spec) == ""


# ---------------------------------------------------------------------------
# Matrix


def test_matrix_is_the_product_in_axis_order(make_spec):
    root = make_spec(
        spec={"personalities": {"p1": {}, "p2": {}}, "modes": {"x": {}, "y": {}}},
        models=[{"slug": "m1", "base_instructions": "a"}, {"slug": "m2", "base_instructions": "b"}],
    )
    spec = load_spec(root)
    ids = [v.id for v in matrix(spec)]
    assert ids == [f"{m}/{p}/{x}" for m in ("m1", "m2") for p in ("p1", "p2") for x in ("x", "y")]


def test_extra_axes_multiply_the_matrix_and_override_scenario(make_spec):
    root = make_spec(
        spec={
            "personalities": {"p1": {}, "p2": {}},
            "modes": {"x": {}},
            "axes": {"sandbox": ["ro", "rw", "full"], "net": ["on", "off"]},
            "scenario": {"sandbox": "from-scenario", "net": "n"},
        },
        fragments={"s": frag("permissions", "{{ sandbox }}/{{ net }}")},
    )
    spec = load_spec(root)
    variants = matrix(spec)
    assert len(variants) == 1 * 2 * 1 * 3 * 2
    assert variants[0] == Variant("m1", "p1", "x", (("sandbox", "ro"), ("net", "on")))
    assert variants[0].id == "m1/p1/x/ro/on" and variants[0].slug == "m1--p1--x--ro--on"
    asm = Assembler(spec)
    texts = {v.id: asm.assemble(v).messages[0].text for v in variants}
    assert texts["m1/p2/x/full/off"] == "full/off"
    assert texts["m1/p1/x/rw/on"] == "rw/on"


def test_include_keeps_only_matching_variants(make_spec):
    root = make_spec(
        spec={
            "personalities": {"p1": {}, "p2": {}},
            "modes": {"plan": {}, "execute": {}},
            "matrix": {"include": [{"personality": "p1"}, {"mode": "exec*", "personality": ["p2"]}]},
        }
    )
    ids = [v.id for v in matrix(load_spec(root))]
    assert ids == ["m1/p1/plan", "m1/p1/execute", "m1/p2/execute"]


def test_exclude_removes_matching_variants(make_spec):
    root = make_spec(
        spec={
            "personalities": {"p1": {}, "p2": {}},
            "modes": {"plan": {}, "execute": {}},
            "axes": {"sb": ["a", "b"]},
            "matrix": {"exclude": [{"personality": "p2", "sb": "b"}, {"mode": "pl?n", "sb": "a"}]},
        }
    )
    ids = [v.id for v in matrix(load_spec(root))]
    assert ids == ["m1/p1/plan/b", "m1/p1/execute/a", "m1/p1/execute/b", "m1/p2/execute/a"]


def test_find_variant_rejects_excluded_and_unknown(make_spec):
    root = make_spec(spec={"modes": {"plan": {}, "execute": {}}, "matrix": {"exclude": [{"mode": "execute"}]}})
    spec = load_spec(root)
    assert find_variant(spec, None, None, None).id == "m1/default/plan"
    with pytest.raises(UsageError, match="excluded"):
        find_variant(spec, None, None, "execute")
    with pytest.raises(UsageError, match="unknown model 'nope'"):
        find_variant(spec, "nope", None, None)
    with pytest.raises(UsageError, match="unknown axis"):
        find_variant(spec, None, None, None, {"colour": "red"})


# ---------------------------------------------------------------------------
# when / requires


def test_when_limits_a_fragment_to_matching_variants(make_spec):
    root = make_spec(
        spec={"personalities": {"friendly": {}, "pragmatic": {}, "none": {}}, "modes": {"plan": {}, "execute": {}}},
        fragments={
            "planner": frag("developer_extensions", "P", when={"mode": ["plan"]}),
            "styled": frag("personality", "S", when={"personality": ["f*", "prag*"], "mode": "execute"}),
        },
    )
    spec = load_spec(root)
    asm = Assembler(spec)
    seen = {v.id: [s.fragment for _, _, s in asm.assemble(v).sections] for v in matrix(spec)}
    assert seen == {
        "m1/friendly/plan": ["planner"],
        "m1/friendly/execute": ["styled"],
        "m1/pragmatic/plan": ["planner"],
        "m1/pragmatic/execute": ["styled"],
        "m1/none/plan": ["planner"],
        "m1/none/execute": [],
    }


def test_when_on_an_unknown_axis_is_an_error_at_load(make_spec):
    root = make_spec(spec=one_mode_spec(), fragments={"f": frag("permissions", "x", when={"colour": ["red"]})})
    with pytest.raises(SpecError, match="'when' names 'colour', which is neither an axis nor a field") as err:
        load_spec(root)
    assert str(err.value.path) == "fragments/f.yaml" and err.value.line is not None


def test_requires_drops_the_section_when_the_value_is_empty(make_spec):
    root = make_spec(
        spec=one_mode_spec(scenario={"present": "yes", "empty": "", "nothing": [], "off": False}),
        fragments={
            "a": frag("permissions", "A", requires=["present"]),
            "b": frag("developer_instructions", "B", requires=["empty"]),
            "c": frag("apps", "C", requires=["nothing"]),
            "d": frag("skills", "D", requires=["off"]),
            "e": frag("plugins", "E", requires=["present", "empty"]),
        },
    )
    spec = load_spec(root)
    assert layout_of(assemble(spec, matrix(spec)[0])) == [("developer", ["a"])]


def test_requires_sees_fragment_variables(make_spec):
    root = make_spec(
        spec=one_mode_spec(),
        fragments={"v": frag("permissions", "{{ greeting }}", requires=["greeting"], variables={"greeting": "hi"})},
    )
    spec = load_spec(root)
    assert assemble(spec, matrix(spec)[0]).messages[0].text == "hi"


def test_requires_an_unknown_name_is_an_error(make_spec):
    root = make_spec(spec=one_mode_spec(), fragments={"f": frag("permissions", "x", requires=["no_such_value"])})
    spec = load_spec(root)
    with pytest.raises(SpecError, match="no_such_value"):
        assemble(spec, matrix(spec)[0])


def test_fragment_variables_do_not_leak_into_variant_values(make_spec):
    """A fragment's own variables shadow scenario values only in that fragment's
    template, not in variant-level values such as the mode text, whichever
    fragment happens to compute them first."""
    root = make_spec(
        spec={"personalities": {"default": {}}, "modes": {"m": {"template": "modes/m.md"}}, "scenario": {"tone": "calm"}},
        fragments={
            "early": frag("permissions", "{{ tone }}|{{ mode.text }}", variables={"tone": "LOUD"}),
            "later": frag("collaboration_mode", "{{ tone }}|{{ mode.text }}"),
        },
        files={"modes/m.md": "Mode {{ tone }}"},
    )
    spec = load_spec(root)
    texts = [s.text for _, _, s in assemble(spec, matrix(spec)[0]).sections]
    assert texts == ["LOUD|Mode calm", "calm|Mode calm"]


def test_a_variant_keeps_its_values_through_copies():
    """A Variant works out its values once (request.Variant): a copy, a
    pickled one and one made by dataclasses.replace are equal keys with the
    same values, and its hash is the dataclass's, of the fields."""
    import copy
    import dataclasses
    import pickle

    v = Variant("m1", "p1", "x", (("sandbox", "ro"), ("net", "on")))
    assert hash(v) == hash(("m1", "p1", "x", (("sandbox", "ro"), ("net", "on"))))
    assert [v.value(a) for a in ("model", "personality", "mode", "sandbox", "net")] == ["m1", "p1", "x", "ro", "on"]
    with pytest.raises(KeyError):
        v.value("missing")
    for other in (copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert other == v and hash(other) == hash(v) and {v: 1}[other] == 1 and other.values == v.values
    moved = dataclasses.replace(v, mode="plan")
    assert moved != v and moved.value("mode") == "plan" and moved.id == "m1/p1/plan/ro/on"
    assert hash(moved) == hash(("m1", "p1", "plan", (("sandbox", "ro"), ("net", "on"))))
    assert dataclasses.asdict(v) == {"model": "m1", "personality": "p1", "mode": "x",
                                     "extra": (("sandbox", "ro"), ("net", "on"))}
