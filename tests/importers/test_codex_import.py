"""`import-codex` against the real Codex fixture in ../shared/fixtures/codex.

Expected texts are composed here independently from the fixture's raw files
and models.json, following Codex's rules as written down in
notes/codex-facts.md (permissions: append_section; collaboration mode: tags
around the template; AGENTS.md and environment_context formats; base
instructions: plain `{{ personality }}` replacement).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from promptspec.assemble.builder import Assembler, assemble, assemble_all
from promptspec.assemble.matrix import matrix
from promptspec.cli import main
from promptspec.importers.codex_source import import_codex
from promptspec.errors import SpecError
from promptspec.spec.readers.load import load_spec

from required import needs

FIXTURE = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "codex"
pytestmark = needs(
    (FIXTURE / "codex-rs").is_dir(), f"Codex fixture not found at {FIXTURE} (../shared beside the repository)"
)

RS = "codex-rs"
CATALOG = f"{RS}/models-manager/models.json"
# Released CLIs send the protocol-era sandbox sentence, so the importer prefers it;
# the newer core/src/context/ files (with a network-proxy sentence) come last.
SANDBOX_DIR = f"{RS}/protocol/src/prompts/permissions/sandbox_mode"
NEW_SANDBOX_DIR = f"{RS}/core/src/context/prompts/permissions/sandbox_mode"
OLD_SANDBOX_DIR = SANDBOX_DIR
APPROVAL_DIR = f"{RS}/protocol/src/prompts/permissions/approval_policy"
MODE_DIR = f"{RS}/core/templates/collaboration_mode"
SANDBOX_FILE = {"read-only": "read_only.md", "workspace-write": "workspace_write.md", "danger-full-access": "danger_full_access.md"}
APPROVAL_FILE = {"untrusted": "unless_trusted.md", "on-failure": "on_failure.md", "on-request": "on_request.md", "never": "never.md"}
PERSONALITIES = ("unset", "none", "friendly", "pragmatic")
TEXT_MODES = ("default", "plan", "execute", "pair_programming")
MODES = ("unset", *TEXT_MODES)  # unset: no collaboration mode for the turn, no section
CWD = "/workspace/project"


def raw(rel: str) -> str:
    return (FIXTURE / rel).read_bytes().decode("utf-8")


def catalog_models() -> list[dict]:
    return json.loads(raw(CATALOG))["models"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    return import_codex(FIXTURE, tmp_path_factory.mktemp("import") / "spec")


@pytest.fixture(scope="module")
def spec(imported):
    return load_spec(imported)


@pytest.fixture(scope="module")
def requests(spec):
    return {r.variant.id: r for r in assemble_all(spec)}


def sections_of(request) -> dict[str, str]:
    return {s.fragment: s.text for _, _, s in request.sections}


# ---------------------------------------------------------------------------
# Shape of the output


def test_every_model_personality_mode_renders(spec, requests):
    slugs = [m["slug"] for m in catalog_models()]
    assert [m.slug for m in spec.models] == slugs
    assert set(requests) == {f"{m}/{p}/{x}" for m in slugs for p in PERSONALITIES for x in MODES}
    for request in requests.values():
        assert [m.role for m in request.messages] == ["developer", "user"]
        developer = ["permissions"] + (["collaboration_mode"] if request.variant.mode != "unset" else [])
        assert [[s.fragment for s in m.sections] for m in request.messages] == [
            developer,
            ["agents_md", "environment_context"],
        ]


def test_spec_refers_to_the_checkout(imported, spec):
    text = (imported / "spec.yaml").read_text()
    assert f'codex: "{FIXTURE.resolve()}"' in text
    assert 'models: "@codex/codex-rs/models-manager/models.json"' in text
    assert spec.models_file == "@codex/codex-rs/models-manager/models.json"
    assert spec.mode("plan").template == f"@codex/{MODE_DIR}/plan.md" and spec.mode("plan").engine == "codex"


def test_no_codex_text_is_copied_into_the_spec(imported):
    """Our output holds glue only: no line of any fixture text appears in it."""
    ours = "\n".join(p.read_text() for p in sorted(imported.rglob("*")) if p.is_file())
    checked = 0
    for path in FIXTURE.rglob("*"):
        if path.suffix not in (".md", ".json") or not path.is_file():
            continue
        text = path.read_text()
        if path.suffix == ".json":
            lines = [v for m in json.loads(text)["models"] for v in _strings(m)]
        else:
            lines = text.splitlines()
        for line in lines:
            for piece in line.split("\n"):
                if len(piece.strip()) >= 40:
                    checked += 1
                    assert piece.strip() not in ours, f"{path.relative_to(FIXTURE)} text copied: {piece[:60]!r}"
    assert checked > 100


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def test_import_is_deterministic(imported, tmp_path):
    again = import_codex(FIXTURE, tmp_path / "again")
    files = lambda root: {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert files(again) == files(imported)


# ---------------------------------------------------------------------------
# Base instructions: Codex's rule computed from the raw JSON


def expected_base(model: dict, personality: str) -> tuple[str, str]:
    messages = model.get("model_messages")
    template = messages.get("instructions_template") if messages else None
    if template is None:
        return "base_instructions", model["base_instructions"]
    variables = messages.get("instructions_variables") or {}
    message = {
        "unset": variables.get("personality_pragmatic"),  # Codex's configured default personality
        "none": "",
        "friendly": variables.get("personality_friendly"),
        "pragmatic": variables.get("personality_pragmatic"),
    }[personality]
    return "template", template.replace("{{ personality }}", message or "")


def test_fixture_has_the_expected_kinds_of_model():
    kinds = {m["slug"]: m.get("model_messages") is None for m in catalog_models()}
    assert kinds == {"gpt-5.4": False, "gpt-5.4-mini": False, "gpt-5.3-codex": False, "gpt-5.2": True, "codex-auto-review": False}


@pytest.mark.parametrize("personality", PERSONALITIES)
def test_base_instructions_follow_codex_rule(requests, personality):
    for model in catalog_models():
        rule, text = expected_base(model, personality)
        for mode in MODES:
            base = requests[f"{model['slug']}/{personality}/{mode}"].base
            assert (base.rule, base.text) == (rule, text), (model["slug"], personality, mode)


def test_personalities_really_differ_in_templated_models(requests):
    for model in catalog_models():
        texts = {p: requests[f"{model['slug']}/{p}/default"].base.text for p in PERSONALITIES}
        if model.get("model_messages") is None:
            assert len(set(texts.values())) == 1
        else:
            assert texts["friendly"] != texts["pragmatic"] != texts["none"]
            assert texts["unset"] == texts["pragmatic"]  # not personality_default, which is empty
            assert "{{ personality }}" not in texts["friendly"]


# ---------------------------------------------------------------------------
# Permissions: append_section composition from the raw files


def append_section(text: str, section: str) -> str:
    if not text.endswith("\n"):
        text += "\n"
    return text + section


def expected_permissions(sandbox_mode, approval_policy, network, roots, *, sandbox_dir=SANDBOX_DIR) -> str:
    sandbox = raw(f"{sandbox_dir}/{SANDBOX_FILE[sandbox_mode]}")
    sandbox = re.sub(r"\{\{\s*network_access\s*\}\}", network, sandbox).replace("{network_access}", network)
    body = append_section("", sandbox.rstrip())
    body = append_section(body, raw(f"{APPROVAL_DIR}/{APPROVAL_FILE[approval_policy]}"))
    roots = roots if sandbox_mode == "workspace-write" else []
    if len(roots) == 1:
        body = append_section(body, f" The writable root is `{roots[0]}`.")
    elif roots:
        body = append_section(body, " The writable roots are " + ", ".join(f"`{r}`" for r in roots) + ".")
    if not body.endswith("\n"):
        body += "\n"
    return "<permissions instructions>" + body + "</permissions instructions>"


def test_permissions_for_the_default_scenario(requests):
    expected = expected_permissions("workspace-write", "on-request", "restricted", [CWD])
    assert expected.startswith("<permissions instructions>\nFilesystem sandboxing")
    assert expected.endswith(f"\n The writable root is `{CWD}`.\n</permissions instructions>")
    for request in requests.values():
        assert sections_of(request)["permissions"] == expected


@pytest.mark.parametrize("sandbox_mode", list(SANDBOX_FILE))
@pytest.mark.parametrize("approval_policy", list(APPROVAL_FILE))
def test_permissions_for_every_sandbox_and_approval(spec, sandbox_mode, approval_policy):
    # Derived, as Codex does: the network is open under danger-full-access only.
    network = "enabled" if sandbox_mode == "danger-full-access" else "restricted"
    for roots in ([CWD], ["/a", "/b c"]):
        scenario = {**spec.scenario, "sandbox_mode": sandbox_mode, "approval_policy": approval_policy,
                    "writable_roots": roots}
        variant_spec = dataclasses.replace(spec, scenario=scenario, memo={})
        request = assemble(variant_spec, matrix(variant_spec)[0])
        got = sections_of(request)["permissions"]
        assert got == expected_permissions(sandbox_mode, approval_policy, network, roots)
        assert f"Network access is {network}." in got
        assert "network proxy" not in got


def test_the_newer_sandbox_texts_are_not_what_releases_send():
    assert "proxy" in raw(f"{NEW_SANDBOX_DIR}/read_only.md") and "proxy" not in raw(f"{SANDBOX_DIR}/read_only.md")


# ---------------------------------------------------------------------------
# Collaboration mode, personality, developer instructions


@pytest.mark.parametrize("mode", TEXT_MODES)
def test_collaboration_section_is_the_template_between_tags(requests, mode):
    text = raw(f"{MODE_DIR}/{mode}.md").replace("{{KNOWN_MODE_NAMES}}", "Default and Plan")
    expected = "<collaboration_mode>" + text + "</collaboration_mode>"
    for model in catalog_models():
        for personality in PERSONALITIES:
            assert sections_of(requests[f"{model['slug']}/{personality}/{mode}"])["collaboration_mode"] == expected
    assert "{{" not in expected


def test_known_mode_names_are_filled(requests):
    text = sections_of(requests["gpt-5.4/unset/default"])["collaboration_mode"]
    assert "Known mode names are Default and Plan." in text


def test_no_personality_section_when_the_template_bakes_it(requests):
    """All fixture templates bake the personality; gpt-5.2 has no model_messages."""
    for request in requests.values():
        assert "personality_spec" not in sections_of(request)


def test_personality_section_when_base_instructions_are_overridden(imported, tmp_path):
    root = tmp_path / "spec"
    shutil.copytree(imported, root)
    (root / "override.md").write_text("Custom base instructions.\n")
    with (root / "spec.yaml").open("a") as f:
        f.write("instructions_override: override.md\n")
    spec = load_spec(root)
    asm = Assembler(spec)
    preamble = spec.fragments[[f.name for f in spec.fragments].index("personality_spec")].variables["preamble"]
    by_slug = {m["slug"]: m for m in catalog_models()}
    for v in matrix(spec):
        request = asm.assemble(v)
        assert request.base.rule == "override"
        got = sections_of(request).get("personality_spec")
        messages = by_slug[v.model].get("model_messages")
        if v.personality in ("friendly", "pragmatic") and messages:
            message = messages["instructions_variables"][f"personality_{v.personality}"]
            assert got == f"<personality_spec> {preamble} \n{message} </personality_spec>", v.id
            names = [s.fragment for s in request.messages[0].sections]
            mode = ["collaboration_mode"] if v.mode != "unset" else []
            assert names == ["permissions", *mode, "personality_spec"]
        else:
            assert got is None, v.id


def test_personality_section_when_the_template_lacks_the_placeholder(tmp_path):
    def edit(models):
        models[0]["model_messages"]["instructions_template"] = "No placeholder here.\n"
        return models

    codex = mini_checkout(tmp_path / "codex", edit_models=edit)
    spec = load_spec(import_codex(codex, tmp_path / "spec"))
    first = spec.models[0].slug
    request = assemble(spec, next(v for v in matrix(spec) if v.id == f"{first}/pragmatic/plan"))
    message = catalog_models()[0]["model_messages"]["instructions_variables"]["personality_pragmatic"]
    assert request.base.text == "No placeholder here.\n"
    assert sections_of(request)["personality_spec"].endswith(f" \n{message} </personality_spec>")
    other = assemble(spec, next(v for v in matrix(spec) if v.id == f"{spec.models[1].slug}/pragmatic/plan"))
    assert "personality_spec" not in sections_of(other)


def test_developer_instructions_go_raw_after_permissions(spec):
    variant_spec = dataclasses.replace(spec, scenario={**spec.scenario, "developer_instructions": "Team rule.\n"}, memo={})
    request = assemble(variant_spec, next(v for v in matrix(variant_spec) if v.mode == "default"))
    names = [s.fragment for s in request.messages[0].sections]
    assert names == ["permissions", "developer_instructions", "collaboration_mode"]
    assert request.messages[0].sections[1].text == "Team rule.\n"


# ---------------------------------------------------------------------------
# User message


def test_agents_md_section_format(imported, requests):
    doc = (imported / "project" / "AGENTS.md").read_text()
    expected = f"# AGENTS.md instructions for {CWD}\n\n<INSTRUCTIONS>\n{doc}\n</INSTRUCTIONS>"
    for request in requests.values():
        assert sections_of(request)["agents_md"] == expected


def test_environment_context_format(spec, requests):
    expected = (
        "<environment_context>\n"
        f"  <cwd>{CWD}</cwd>\n"
        "  <shell>bash</shell>\n"
        "  <current_date>2026-01-15</current_date>\n"
        "  <timezone>Etc/UTC</timezone>\n"
        "</environment_context>"
    )
    for request in requests.values():
        assert sections_of(request)["environment_context"] == expected
    # Optional lines disappear when unset; the shell line always stays.
    bare = dataclasses.replace(spec, scenario={**spec.scenario, "current_date": "", "timezone": None, "shell": "zsh"})
    text = sections_of(assemble(bare, matrix(bare)[0]))["environment_context"]
    assert text == f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <shell>zsh</shell>\n</environment_context>"


# ---------------------------------------------------------------------------
# Output folder handling and errors


def test_refuses_a_non_empty_folder_without_force(imported, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SpecError, match="not empty"):
        import_codex(FIXTURE, out)
    with pytest.raises(SpecError, match="not an earlier import"):
        import_codex(FIXTURE, out, force=True)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_force_replaces_an_existing_spec(tmp_path):
    """--force replaces an earlier import (an edited file comes back as imported),
    but never a folder holding anything an import does not write (security F16)."""
    out = tmp_path / "out"
    import_codex(FIXTURE, out)
    original = (out / "spec.yaml").read_text(encoding="utf-8")
    (out / "spec.yaml").write_text(original + "# edited by hand\n", encoding="utf-8")
    with pytest.raises(SpecError, match="--force"):
        import_codex(FIXTURE, out)
    assert import_codex(FIXTURE, out, force=True) == out
    assert (out / "spec.yaml").read_text(encoding="utf-8") == original
    (out / "stale.txt").write_text("someone's notes")
    with pytest.raises(SpecError, match="holds 'stale.txt', which an import does not write"):
        import_codex(FIXTURE, out, force=True)
    assert (out / "stale.txt").read_text() == "someone's notes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temp folders left


def test_an_empty_folder_is_fine(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    import_codex(FIXTURE, out)
    assert (out / "spec.yaml").is_file()


def test_output_folder_gets_normal_permissions_and_parents(tmp_path):
    """The temporary folder is renamed into place: it must not keep a private 0700 mode."""
    umask = os.umask(0)
    os.umask(umask)
    out = import_codex(FIXTURE, tmp_path / "a" / "b" / "spec")
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask


def test_missing_checkout_is_a_one_line_error(tmp_path):
    with pytest.raises(SpecError) as info:
        import_codex(tmp_path / "nope", tmp_path / "out")
    message = str(info.value)
    assert str(tmp_path / "nope") in message and "not found" in message and "\n" not in message
    assert not (tmp_path / "out").exists()


def test_folder_without_catalog_names_what_was_looked_for(tmp_path):
    (tmp_path / "empty" / "codex-rs").mkdir(parents=True)
    with pytest.raises(SpecError) as info:
        import_codex(tmp_path / "empty", tmp_path / "out")
    message = str(info.value)
    assert str(tmp_path / "empty") in message
    assert "codex-rs/models-manager/models.json" in message and "codex-rs/core/models.json" in message
    assert not (tmp_path / "out").exists()


def test_broken_catalog_leaves_nothing_behind(tmp_path):
    codex = mini_checkout(tmp_path / "codex")
    (codex / CATALOG).write_text('{"models": [')
    with pytest.raises(SpecError, match="invalid JSON"):
        import_codex(codex, tmp_path / "out")
    with pytest.raises(SpecError, match="invalid JSON"):
        import_codex(codex, tmp_path / "new" / "deeper" / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["codex"]


def test_cli_import_and_errors(tmp_path, capsys):
    out = tmp_path / "cli-spec"
    assert main(["import-codex", str(FIXTURE), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote a spec to {out}" in printed
    assert "note: sources do not say which approval texts" in printed and "--cli" in printed
    assert main(["import-codex", str(FIXTURE), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not empty" in err and "Traceback" not in err
    assert main(["import-codex", str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("promptspec: error: ") and err.count("\n") == 1
    assert main(["render", "--spec", str(out), "--model", "gpt-5.2", "--mode", "plan", "--format", "layout"]) == 0
    assert capsys.readouterr().out == (
        "00:message/developer[2]: [01] <permissions instructions> [02] <collaboration_mode>\n"
        "01:message/user[2]: [01] # AGENTS.md instructions for [02] <environment_context>\n"
    )


# ---------------------------------------------------------------------------
# Older checkouts


MINI_FILES = (
    *(f"{SANDBOX_DIR}/{n}" for n in SANDBOX_FILE.values()),
    *(f"{APPROVAL_DIR}/{n}" for n in APPROVAL_FILE.values()),
    *(f"{MODE_DIR}/{m}.md" for m in TEXT_MODES),
)


def mini_checkout(dst: Path, *, files=MINI_FILES, catalog_at=CATALOG, edit_models=None) -> Path:
    """A subset of the fixture at Codex's paths, optionally with an edited catalog."""
    for rel in files:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURE / rel, dst / rel)
    models = catalog_models()
    if edit_models is not None:
        models = edit_models(models)
    (dst / catalog_at).parent.mkdir(parents=True, exist_ok=True)
    (dst / catalog_at).write_text(json.dumps({"models": models}, indent=2))
    return dst


def test_older_layout_imports_and_renders(tmp_path):
    def strip_messages(models):
        for m in models:
            m.pop("model_messages", None)
        return models

    old_files = (
        *(f"{OLD_SANDBOX_DIR}/{n}" for n in SANDBOX_FILE.values()),
        *(f"{APPROVAL_DIR}/{n}" for n in APPROVAL_FILE.values()),
        *(f"{MODE_DIR}/{m}.md" for m in TEXT_MODES),
    )
    codex = mini_checkout(tmp_path / "old", files=old_files, catalog_at=f"{RS}/core/models.json", edit_models=strip_messages)
    out = import_codex(codex, tmp_path / "spec")
    assert 'models: "@codex/codex-rs/core/models.json"' in (out / "spec.yaml").read_text()
    spec = load_spec(out)
    requests = assemble_all(spec)
    assert len(requests) == len(catalog_models()) * len(PERSONALITIES) * len(MODES)
    by_slug = {m["slug"]: m for m in catalog_models()}
    expected = expected_permissions("workspace-write", "on-request", "restricted", [CWD], sandbox_dir=OLD_SANDBOX_DIR)
    assert "{network_access}" in raw(f"{OLD_SANDBOX_DIR}/workspace_write.md")
    for request in requests:
        assert (request.base.rule, request.base.text) == ("base_instructions", by_slug[request.model]["base_instructions"])
        sections = sections_of(request)
        assert sections["permissions"] == expected
        assert "{network_access}" not in sections["permissions"]
        assert "personality_spec" not in sections
