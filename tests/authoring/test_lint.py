"""Lint rules: each one fires on a spec made to break it and stays quiet on a
spec that keeps it; the embedded spec is clean even with --strict; the CLI's
exit codes and formats; the rules reference documents every rule."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from promptspec import cli, pipeline
from promptspec.authoring import lint
from promptspec.errors import SpecError
from promptspec.spec.readers.load import load_spec
from promptspec.measure.counter import TokenCounter

from _helpers import cli_process, subprocess_env

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
RULES_DOC = ROOT / "docs" / "guide" / "lint-rules.md"

BASE_SPEC = """\
name: tiny
models: models.json
personalities:
  default: {}
modes:
  default: {}
  plan: {}
scenario:
  cwd: /p
  shell: bash
"""

MODELS = {
    "models": [
        {
            "slug": "m1",
            "base_instructions": "You are a test agent.\n",
            "context_window": 100000,
        }
    ]
}

GOOD_FRAGMENT = """\
role: developer
slot: developer_extensions
start: "<good>"
end: "</good>"
text: "\\nShell is {{ shell }}.\\n"
"""


def tiny_spec(
    tmp_path: Path,
    fragments: dict[str, str] | None = None,
    *,
    spec: str = BASE_SPEC,
    models: dict[str, Any] | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    root = tmp_path / "spec"
    (root / "fragments").mkdir(parents=True)
    (root / "spec.yaml").write_text(spec)
    (root / "models.json").write_text(json.dumps(models or MODELS, indent=2))
    for name, text in {"good": GOOD_FRAGMENT, **(fragments or {})}.items():
        (root / "fragments" / f"{name}.yaml").write_text(textwrap.dedent(text))
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def run(root: Path, tmp_path: Path) -> pipeline.Result:
    return pipeline.run(root, counter=TokenCounter(tmp_path / "token-cache"))


def findings(root: Path, tmp_path: Path) -> list[lint.Finding]:
    return lint.lint(run(root, tmp_path))


def rules(found: list[lint.Finding]) -> list[str]:
    return [f.rule for f in found]


def only(found: list[lint.Finding], rule: str) -> list[lint.Finding]:
    return [f for f in found if f.rule == rule]


def test_base_spec_is_clean(tmp_path: Path) -> None:
    assert findings(tiny_spec(tmp_path), tmp_path) == []


# ---------------------------------------------------------------------------
# PS101 role matches slot


def test_ps101_role_must_match_slot(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"wrong": GOOD_FRAGMENT.replace("<good>", "<wrong>").replace("</good>", "</wrong>").replace("role: developer", "role: user")})
    hits = only(findings(root, tmp_path), "PS101")
    assert len(hits) == 1
    assert hits[0].path == "fragments/wrong.yaml" and hits[0].fragment == "wrong"
    assert "developer message" in hits[0].message
    assert hits[0].severity == "error"


def test_ps101_user_fragment_in_user_slot_is_fine(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace("developer_extensions", "user_extensions").replace("role: developer", "role: user")
    root = tiny_spec(tmp_path, {"good": frag})
    assert findings(root, tmp_path) == []


def test_ps101_role_outside_developer_and_user(tmp_path: Path) -> None:
    # The loader refuses such a role, so build the fragment directly.
    spec = load_spec(tiny_spec(tmp_path))
    bad = dataclasses.replace(spec.fragments[0], role="system")
    hits = only(lint.check_spec(dataclasses.replace(spec, fragments=(bad,))), "PS101")
    assert [h.message for h in hits] == ["role 'system' is not 'developer' or 'user'"]


# ---------------------------------------------------------------------------
# PS102 / PS103 markers


def test_ps102_start_without_end(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('end: "</good>"\n', "")
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}), tmp_path), "PS102")
    assert len(hits) == 1 and "'end' is empty" in hits[0].message


def test_ps102_no_markers_at_all_is_fine(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('start: "<good>"\n', "").replace('end: "</good>"\n', "")
    assert rules(findings(tiny_spec(tmp_path, {"good": frag}), tmp_path)) == []


def _marked(start: str, end: str) -> str:
    return GOOD_FRAGMENT.replace('"<good>"', json.dumps(start)).replace('"</good>"', json.dumps(end))


def test_ps103_markers_equal_ignoring_case(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"other": _marked("<GOOD>", "</GOOD>")})
    hits = only(findings(root, tmp_path), "PS103")
    assert {h.fragment for h in hits} == {"good", "other"}
    assert all("case-insensitively" in h.message for h in hits)


def test_ps103_prefix_collision(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"other": _marked("<good", "</good-ish>")})
    hits = only(findings(root, tmp_path), "PS103")
    assert any(h.fragment == "other" and "is a prefix of" in h.message for h in hits)


def test_ps103_compares_the_static_part_of_templated_markers(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"other": _marked("<good>{{ shell }}", "</other>")})
    hits = only(findings(root, tmp_path), "PS103")
    assert {h.fragment for h in hits} == {"good", "other"}


def test_ps103_start_equals_end(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"good": _marked("<same>", "<SAME>")})
    hits = only(findings(root, tmp_path), "PS103")
    assert len(hits) == 1 and "start and end markers are the same" in hits[0].message


def test_ps103_catches_a_lookalike_copy_of_a_marker(tmp_path: Path) -> None:
    # "<gооd>" with two Cyrillic o's reads like "<good>" but is another string.
    root = tiny_spec(tmp_path, {"other": _marked("<g\u043e\u043ed>", "</other>")})
    hits = only(findings(root, tmp_path), "PS103")
    assert {h.fragment for h in hits} == {"good", "other"}


def test_ps105_flags_non_ascii_markers(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"other": _marked("<n\u043ftes>", "</n\u043ftes>")})
    hits = only(findings(root, tmp_path), "PS105")
    assert {h.fragment for h in hits} == {"other"}
    assert "U+043F CYRILLIC SMALL LETTER PE" in hits[0].message


def test_ps105_ascii_markers_are_fine(tmp_path: Path) -> None:
    root = tiny_spec(tmp_path, {"other": _marked("<notes>", "</notes>")})
    assert only(findings(root, tmp_path), "PS105") == []


def test_ps103_distinct_markers_are_fine(tmp_path: Path) -> None:
    # `<good>` is not a prefix of `<good_more>` (the `>` differs).
    root = tiny_spec(tmp_path, {"other": _marked("<good_more>", "</good_more>")})
    assert findings(root, tmp_path) == []


# ---------------------------------------------------------------------------
# PS104 glue


def test_ps104_body_glued_to_both_markers(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "Shell is {{ shell }}."')
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}), tmp_path), "PS104")
    assert len(hits) == 2
    assert any("start marker is glued" in h.message for h in hits)
    assert any("glued onto the end marker" in h.message for h in hits)
    assert all(h.severity == "warning" and h.variant for h in hits)


def test_ps104_glue_ok_opts_out(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "Shell is {{ shell }}."') + "glue_ok: true\n"
    assert findings(tiny_spec(tmp_path, {"good": frag}), tmp_path) == []


def test_ps104_marker_ending_in_a_space_may_touch_the_body(tmp_path: Path) -> None:
    # Like Codex's `# AGENTS.md instructions for ` + `{cwd}`: the space separates.
    frag = _marked("# Notes for ", "</notes>").replace('text: "\\nShell', 'text: "{{ cwd }}\\nShell')
    assert findings(tiny_spec(tmp_path, {"good": frag}), tmp_path) == []


def test_ps104_checks_every_variant(tmp_path: Path) -> None:
    spec = BASE_SPEC + "axes:\n  flavor: [a, b]\n"
    frag = GOOD_FRAGMENT.replace(
        'text: "\\nShell is {{ shell }}.\\n"', 'text: "{% if flavor == \'a\' %}\\n{% endif %}Shell is {{ shell }}.\\n"'
    )
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path), "PS104")
    assert len(hits) == 1
    assert hits[0].variant == "m1/default/default/b"
    assert "and 1 more" in hits[0].message  # m1/default/plan/b as well


def test_ps104_points_at_the_body_file(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', "body: good.md")
    root = tiny_spec(tmp_path, {"good": frag}, files={"fragments/good.md": "\nno final newline"})
    hits = only(findings(root, tmp_path), "PS104")
    assert [(h.path, h.line) for h in hits] == [("fragments/good.md", 1)]


# ---------------------------------------------------------------------------
# PS201 / PS202 variables


def test_ps201_undefined_variable_in_a_branch_never_rendered(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', "body: good.md")
    body = "\nShell is {{ shell }}.\n{% if false %}\n{{ typo_name }}\n{% endif %}\n"
    root = tiny_spec(tmp_path, {"good": frag}, files={"fragments/good.md": body})
    hits = only(findings(root, tmp_path), "PS201")
    assert len(hits) == 1
    assert (hits[0].path, hits[0].line) == ("fragments/good.md", 4)
    assert "'typo_name'" in hits[0].message


def test_ps201_names_from_variables_axes_and_builtins_are_defined(tmp_path: Path) -> None:
    spec = BASE_SPEC + "axes:\n  flavor: [a]\n"
    frag = GOOD_FRAGMENT.replace(
        'text: "\\nShell is {{ shell }}.\\n"',
        'text: "\\n{{ greeting }} {{ flavor }} {{ model.slug }} {{ mode.name }} {{ personality.name }} {{ variant.id }} {{ base.rule }} {{ agents_md }}\\n"',
    ) + "variables:\n  greeting: hi\n"
    assert findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path) == []


def test_ps201_mode_template_and_requires(tmp_path: Path) -> None:
    spec = BASE_SPEC.replace("  plan: {}\n", "  plan:\n    template: modes/plan.md\n")
    frag = GOOD_FRAGMENT + "requires: [nowhere]\n"
    root = tiny_spec(tmp_path, {"good": frag}, spec=spec, files={"modes/plan.md": "Plan for {{ missing_mode_name }}.\n"})
    # The spec does not assemble ('requires' names an unknown value), so only
    # the static rules can run: they explain why.
    with pytest.raises(SpecError):
        run(root, tmp_path)
    hits = only(lint.check_spec(load_spec(root)), "PS201")
    assert sorted((h.path, h.line) for h in hits) == [("fragments/good.yaml", 1), ("modes/plan.md", 1)]


def test_ps202_unused_variable(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT + "variables:\n  leftover: 1\n"
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}), tmp_path), "PS202")
    assert len(hits) == 1 and "'leftover'" in hits[0].message and hits[0].severity == "warning"


def test_ps202_variable_used_in_an_included_file_counts(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "\\n{% include \'parts/tail.md\' %}"')
    frag += "variables:\n  tail: end\n"
    root = tiny_spec(tmp_path, {"good": frag}, files={"parts/tail.md": "{{ tail }}\n"})
    assert findings(root, tmp_path) == []


# ---------------------------------------------------------------------------
# PS203 unknown names / PS204 never applies / PS205 never rendered


def test_ps203_when_and_matrix_name_undefined_values(tmp_path: Path) -> None:
    spec = BASE_SPEC + "matrix:\n  exclude:\n    - personality: friendly\n"
    frag = GOOD_FRAGMENT + "when:\n  mode: [plan, exceute]\n"
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path), "PS203")
    assert sorted((h.path, h.line) for h in hits) == [("fragments/good.yaml", 1), ("spec.yaml", 13)]
    assert any("mode 'exceute'" in h.message for h in hits)
    assert any("personality 'friendly'" in h.message for h in hits)


def test_unknown_axis_in_when_is_a_load_error_not_a_finding(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT + "when:\n  moood: [plan]\n"
    root = tiny_spec(tmp_path, {"good": frag})
    with pytest.raises(SpecError, match="'when' names 'moood', which is neither an axis nor a field"):
        load_spec(root)


def test_ps203_model_field_value_no_model_has(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT + "when:\n  display_name: [Nobody]\n"
    hits = only(findings(tiny_spec(tmp_path, {"good": frag}), tmp_path), "PS203")
    assert len(hits) == 1 and "model field display_name 'Nobody'" in hits[0].message


def test_ps203_patterns_that_match_are_fine(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT + "when:\n  mode: [pl*]\n  model: [m1]\n"
    assert findings(tiny_spec(tmp_path, {"good": frag}), tmp_path) == []


def test_ps204_when_excludes_every_variant(tmp_path: Path) -> None:
    spec = BASE_SPEC + "matrix:\n  exclude:\n    - mode: plan\n"
    frag = GOOD_FRAGMENT + "when:\n  mode: [plan]\n"
    found = findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path)
    assert rules(found) == ["PS204"]


def test_ps204_when_leaving_one_variant_is_fine(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT + "when:\n  mode: [plan]\n"
    assert findings(tiny_spec(tmp_path, {"good": frag}), tmp_path) == []


def test_ps205_requires_empty_everywhere(tmp_path: Path) -> None:
    spec = BASE_SPEC + "  tools: []\n"
    frag = GOOD_FRAGMENT + "requires: [tools]\n"
    found = findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path)
    assert rules(found) == ["PS205"] and "'requires' values are empty" in found[0].message


def test_ps205_requires_met_is_fine(tmp_path: Path) -> None:
    spec = BASE_SPEC + "  tools: [grep]\n"
    frag = GOOD_FRAGMENT + "requires: [tools]\n"
    assert findings(tiny_spec(tmp_path, {"good": frag}, spec=spec), tmp_path) == []


# ---------------------------------------------------------------------------
# PS301 AGENTS.md / PS302 budget / PS303 compaction


AGENTS_FRAGMENT = """\
role: user
slot: agents_md
requires: [agents_md]
start: "# AGENTS.md instructions for "
end: "</INSTRUCTIONS>"
text: |
  {{ cwd }}

  <INSTRUCTIONS>
  {{ agents_md }}
"""


def _agents_spec(tmp_path: Path, max_bytes: int) -> Path:
    spec = BASE_SPEC + f"agents_md:\n  tree: project\n  project_root: /p\n  max_bytes: {max_bytes}\n"
    return tiny_spec(
        tmp_path,
        {"agents_md": AGENTS_FRAGMENT},
        spec=spec,
        files={"project/AGENTS.md": "x" * 100 + "\n", "project/sub/AGENTS.md": "shadowed by nothing, but not on the cwd path\n"},
    )


def test_ps301_agents_md_over_budget(tmp_path: Path) -> None:
    hits = only(findings(_agents_spec(tmp_path, 60), tmp_path), "PS301")
    assert len(hits) == 1
    assert hits[0].path == "project/AGENTS.md"
    assert "101 bytes" in hits[0].message and "last 41 bytes" in hits[0].message


def test_ps301_agents_md_within_budget(tmp_path: Path) -> None:
    # Also: an AGENTS.md discovery could read for another cwd is no orphan.
    assert findings(_agents_spec(tmp_path, 1000), tmp_path) == []


def test_ps302_fragment_over_token_budget(tmp_path: Path) -> None:
    spec = BASE_SPEC + "tokens:\n  fragment_budget: 5\n"
    hits = only(findings(tiny_spec(tmp_path, spec=spec), tmp_path), "PS302")
    assert len(hits) == 1 and hits[0].fragment == "good" and "over tokens.fragment_budget 5" in hits[0].message


def test_ps302_fragment_within_token_budget(tmp_path: Path) -> None:
    spec = BASE_SPEC + "tokens:\n  fragment_budget: 500\n"
    assert findings(tiny_spec(tmp_path, spec=spec), tmp_path) == []


def test_ps303_variant_past_auto_compaction(tmp_path: Path) -> None:
    models = {"models": [{**MODELS["models"][0], "context_window": 100, "auto_compact_token_limit": 10}]}
    hits = only(findings(tiny_spec(tmp_path, models=models), tmp_path), "PS303")
    assert len(hits) == 1
    assert hits[0].path == "models.json" and hits[0].severity == "error"
    assert "2 variants of model m1" in hits[0].message


def test_ps303_variant_with_headroom_is_fine(tmp_path: Path) -> None:
    models = {"models": [{**MODELS["models"][0], "context_window": 100000, "auto_compact_token_limit": 90000}]}
    assert findings(tiny_spec(tmp_path, models=models), tmp_path) == []


# ---------------------------------------------------------------------------
# PS401 orphans


def test_ps401_unused_file(tmp_path: Path) -> None:
    root = tiny_spec(
        tmp_path,
        files={
            "notes/old-draft.md": "unused\n",
            "README.md": "ignored\n",
            "prompts.lock.json": "{}\n",
            ".editorconfig": "ignored\n",
        },
    )
    hits = only(findings(root, tmp_path), "PS401")
    assert [h.path for h in hits] == ["notes/old-draft.md"]


def test_ps401_files_read_through_text_and_templates_are_used(tmp_path: Path) -> None:
    spec = BASE_SPEC.replace("  default: {}\n  plan: {}\n", "  default: {}\n  plan:\n    template: modes/plan.md\n")
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "\\n{{ text(\'texts/shell.md\', shell=shell) }}"')
    root = tiny_spec(
        tmp_path, {"good": frag}, spec=spec,
        files={"texts/shell.md": "Shell: {{ shell }}\n", "modes/plan.md": "Plan first.\n"},
    )
    assert findings(root, tmp_path) == []


# ---------------------------------------------------------------------------
# The embedded spec, data and output


def test_embedded_spec_lints_clean_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lint", "--strict", "--spec", str(TEMPLATES)]) == 0
    assert capsys.readouterr().out == "no findings\n"


def test_embedded_spec_copy_with_a_lock_file_is_still_clean(tmp_path: Path) -> None:
    copy = tmp_path / "spec"
    shutil.copytree(TEMPLATES, copy)
    (copy / "prompts.lock.json").write_text("{}\n")
    assert findings(copy, tmp_path) == []


def test_findings_are_data_with_doc_anchor(tmp_path: Path) -> None:
    frag = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "Shell is {{ shell }}.\\n"')
    found = findings(tiny_spec(tmp_path, {"good": frag}), tmp_path)
    (f,) = found
    assert f.oneline() == f"fragments/good.yaml:1: PS104 {f.message}"
    assert f.doc == "docs/guide/lint-rules.md#ps104"
    assert f.site_doc == "guide/lint-rules.md#ps104"
    assert f.to_dict()["name"] == "marker-glue"
    assert lint.for_fragment(found, "good") == [f]
    assert lint.for_fragment(found, "other") == []


def test_cli_exit_codes_and_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warn = GOOD_FRAGMENT.replace('text: "\\nShell is {{ shell }}.\\n"', 'text: "Shell is {{ shell }}.\\n"')
    root = tiny_spec(tmp_path, {"good": warn})
    assert cli.main(["lint", "--spec", str(root)]) == 0  # a warning alone passes
    out = capsys.readouterr().out.splitlines()
    assert re.match(r"^fragments/good\.yaml:1: PS104 .* \(warning; docs/guide/lint-rules\.md#ps104\)$", out[0])
    assert out[-1] == "0 errors, 1 warning"
    assert cli.main(["lint", "--strict", "--spec", str(root)]) == 1
    capsys.readouterr()
    assert cli.main(["lint", "--format", "json", "--spec", str(root)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["warnings"] == 1 and data["findings"][0]["rule"] == "PS104"
    assert data["findings"][0]["doc"] == "docs/guide/lint-rules.md#ps104"

    err = GOOD_FRAGMENT.replace("role: developer", "role: user")
    root2 = tiny_spec(tmp_path / "b", {"good": err})
    assert cli.main(["lint", "--spec", str(root2)]) == 1
    assert "PS101" in capsys.readouterr().out


def test_cli_spec_that_fails_to_load_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tiny_spec(tmp_path, {"good": GOOD_FRAGMENT.replace("role: developer", "role: system")})
    assert cli.main(["lint", "--spec", str(root)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptspec: error: fragments/good.yaml:1:")


def test_cli_spec_that_fails_to_assemble_shows_static_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frag = GOOD_FRAGMENT.replace("{{ shell }}", "{{ shel }}")
    root = tiny_spec(tmp_path, {"good": frag})
    assert cli.main(["lint", "--spec", str(root)]) == 2
    captured = capsys.readouterr()
    assert "PS201 template variable 'shel' is not defined" in captured.out
    assert len(captured.err.splitlines()) == 1


def test_output_is_deterministic(tmp_path: Path) -> None:
    spec = BASE_SPEC + "tokens:\n  fragment_budget: 5\n"
    frag = _marked("<GOOD>", "</good>").replace('text: "\\nShell', 'text: "Shell')
    root = tiny_spec(tmp_path, {"other": frag}, spec=spec, files={"b.txt": "", "a.txt": ""})
    first = lint.format_text(findings(root, tmp_path))
    second = lint.format_text(findings(root, tmp_path))
    assert first == second
    assert first.index("a.txt") < first.index("b.txt") < first.index("fragments/")
    # Across processes with different hash seeds too (set and dict order must not leak into
    # the output): a process boundary on purpose, the seed is fixed when Python starts.
    runs = {seed: cli_process("lint", "--spec", str(root), env={**subprocess_env(), "PYTHONHASHSEED": seed}) for seed in ("1", "2")}
    assert runs["1"].returncode == runs["2"].returncode != 0  # the findings are there
    assert runs["1"].stdout == runs["2"].stdout and "a.txt" in runs["1"].stdout


# ---------------------------------------------------------------------------
# The rules reference


def test_every_rule_is_documented_with_its_anchor() -> None:
    doc = RULES_DOC.read_text(encoding="utf-8")
    for rule in lint.RULES.values():
        assert f'<a id="{rule.anchor}"></a>' in doc, rule.id
        assert re.search(rf"^## {rule.id} ", doc, re.M), rule.id
    documented = set(re.findall(r'<a id="(ps\d+)"></a>', doc))
    assert documented == {r.anchor for r in lint.RULES.values()}


def test_a_file_only_included_in_a_fragment_that_never_applies_is_an_orphan(tmp_path: Path) -> None:
    spec = BASE_SPEC + "matrix:\n  exclude:\n    - mode: plan\n"
    frag = _marked("<late>", "</late>").replace('text: "\\nShell', 'text: "\\n{% include \'parts/late.md\' %}Shell')
    frag += "when:\n  mode: [plan]\n"
    root = tiny_spec(tmp_path, {"late": frag}, spec=spec, files={"parts/late.md": "late\n"})
    # Lint reads the include to check its variables; that read is not a use.
    found = findings(root, tmp_path)
    assert sorted((f.rule, f.path) for f in found) == [("PS204", "fragments/late.yaml"), ("PS401", "parts/late.md")]


def test_ps206_a_skeleton_left_as_new_wrote_it(tmp_path: Path) -> None:
    """`new fragment` passes lint by design; its TODO description and, in a
    spec that names owners, its empty owner are reported until filled in."""
    owned = GOOD_FRAGMENT + "description: Says which shell.\nowner: platform\n"
    todo = GOOD_FRAGMENT.replace("<good>", "<todo>").replace("</good>", "</todo>") + 'description: "TODO: what it is for."\nowner: ""\n'
    found = findings(tiny_spec(tmp_path, {"good": owned, "todo": todo}), tmp_path)
    assert rules(found) == ["PS206", "PS206"]
    assert {f.fragment for f in found} == {"todo"} and any("TODO" in f.message for f in found) and any("owner" in f.message for f in found)


def test_ps206_no_owner_asked_for_in_a_spec_without_owners(tmp_path: Path) -> None:
    assert findings(tiny_spec(tmp_path, {"good": GOOD_FRAGMENT + "description: Says which shell.\n"}), tmp_path) == []
