"""The shipped JSON Schemas (spec/schema/) and the loader agree.

Two ways: every key, enum and name rule the loader knows is in the schemas
(so an editor completes exactly what loads), and on every case of the
bad-input corpus the schema refuses what the loader refuses, at the same
file, unless the case is one only the loader can see (BEYOND_SCHEMA, each
with its reason: the schema sees one file's data, not the file system or the
other files), and never refuses what the loader accepts.  The embedded spec
and an imported Codex spec validate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from promptspec.errors import SpecError
from promptspec.spec.readers.catalog import MODEL_KEYS
from promptspec.spec.readers.load import FRAGMENT_KEYS, LIMIT_CEILINGS, SPEC_KEYS, load_spec
from promptspec.spec.model import COMPUTED_BODY_KEYS, DEFAULT_LAYOUT, ENGINES, NAME_RE, ROLES, TOOL_PLACES
from promptspec.spec.model import BUILTIN_NAMES
from promptspec.spec.readers.shaping import LAYOUT_KEYS
from promptspec.spec.readers.tools import ACCEPTABLE_LINT, REQUEST_KEYS, RULE_KEYS, TOOL_KEYS, TOOLS_KEYS
from promptspec.spec.schemas import KINDS, load_schema, modeline, schema_url
from promptspec.spec.readers.sources import load_json, load_yaml

from _helpers import TEMPLATES
from required import require_module, require_shared
from test_corpus import CASES, prepare

jsonschema = require_module("jsonschema", "jsonschema is a test dependency: pip install -e '.[test]'")

BEYOND_SCHEMA = {
    # Files and the file system: a schema sees one document's data only.
    "body-name-too-long": "the body file's name is too long for the file system",
    "fifo-body": "the body is a named pipe",
    "fragment-body-missing": "the body file does not exist",
    "fragments-folder-outside": "the fragments folder is outside the spec folder",
    "missing-fragments-folder": "the fragments folder does not exist",
    "missing-models-file": "models.json does not exist",
    "models-absolute": "the models path points outside the spec folder",
    "roots-etc": "where a root folder points",
    "symlink-body-outside": "a symlink out of the spec folder",
    "symlink-definition-outside": "a symlink out of the spec folder",
    "symlink-loop": "a symlink loop",
    "symlink-spec-yaml-outside": "a symlink out of the spec folder",
    # A fragment's name is its file's name, which the schema does not see.
    "fragment-name-unsafe": "the file name is not a safe name",
    "fragment-name-case-clash": "two file names equal up to letter case",
    "fragment-yaml-and-yml": "two files with one fragment name",
    # JSON Schema cannot compare two keys up to letter case.
    "axis-name-case-clash": "two axis names equal up to letter case",
    "axis-value-case-clash": "two axis values equal up to letter case",
    "model-slug-case-clash": "two model slugs equal up to letter case",
    "personality-case-clash": "two personality names equal up to letter case",
    # Across files: one file's schema cannot see the other file.
    "fragment-unknown-slot": "a slot of the layout in spec.yaml",
    "tool-when-unknown": "an axis of spec.yaml or a field of models.json",
    "fragment-when-unknown-axis": "an axis of spec.yaml or a field of models.json",
    "tool-description-over-budget": "the description budget set in spec.yaml",
    "tool-missing": "tools.order names a file that does not exist",
}


def _documents(spec: Path) -> tuple[list[tuple[str, str, Any]], list[str]]:
    """(kind, path relative to the spec, data) of each YAML/JSON file the spec
    names inside its folder, and the files that did not parse (the loader
    refuses those too, with the parser's line)."""
    docs, unparsed = [], []

    def read(kind: str, rel: str) -> Any:
        path = spec / rel
        if path.is_symlink() or not path.is_file():
            return None  # the loader's business: links, pipes, missing files
        try:
            data = (load_json if rel.endswith(".json") else load_yaml)(path, rel)
        except (SpecError, OSError, RecursionError):
            unparsed.append(rel)
            return None
        docs.append((kind, rel, data))
        return data

    top = read("spec", "spec.yaml")
    top = top if isinstance(top, dict) else {}
    models = top.get("models") or "models.json"
    if isinstance(models, str) and not models.startswith(("/", "@")) and ".." not in models:
        read("models", models)
    tools = top.get("tools") if isinstance(top.get("tools"), dict) else {}
    for kind, folder, suffixes in (("fragment", top.get("fragments") or "fragments", (".yaml", ".yml")),
                                   ("tool", tools.get("folder") or "tools", (".yaml", ".yml", ".json"))):
        if isinstance(folder, str) and ".." not in folder and not folder.startswith(("/", "@")) and (spec / folder).is_dir() and not (spec / folder).is_symlink():
            for path in sorted((spec / folder).iterdir()):
                if path.suffix in suffixes:
                    read(kind, path.relative_to(spec).as_posix())
    return docs, unparsed


def _validator(kind: str):
    schema = load_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


VALIDATORS = {kind: _validator(kind) for kind in KINDS}


def _schema_errors(docs) -> dict[str, str]:
    out = {}
    for kind, rel, data in docs:
        error = jsonschema.exceptions.best_match(VALIDATORS[kind].iter_errors(data))
        if error is not None:
            out[rel] = f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
    return out


@pytest.mark.parametrize("name", CASES)
def test_schema_and_loader_agree_on_the_corpus(name: str, tmp_path: Path) -> None:
    _case, spec = prepare(name, tmp_path)
    docs, unparsed = _documents(spec)
    flagged = _schema_errors(docs)
    try:
        load_spec(spec)
        refused = None
    except SpecError as exc:
        refused = exc
    if refused is None:
        assert not unparsed and not flagged, f"the schema refuses what the loader accepts: {flagged or unparsed}"
        assert name not in BEYOND_SCHEMA, f"{name} loads: take it out of BEYOND_SCHEMA"
        return
    if unparsed:
        assert str(refused.path) in unparsed, f"loader: {refused.oneline()}; unparsable: {unparsed}"
        return
    if name in BEYOND_SCHEMA:
        assert not flagged, f"the schema now catches {name} ({flagged}): take it out of BEYOND_SCHEMA"
        return
    assert flagged, f"the loader refuses ({refused.oneline()}) but the schema accepts: tighten the schema or add the case to BEYOND_SCHEMA with a reason"
    assert str(refused.path) in flagged, f"loader: {refused.oneline()}; schema: {flagged}"


def test_every_beyond_case_exists() -> None:
    assert set(BEYOND_SCHEMA) <= set(CASES)


def _props(schema: dict, *path: str) -> set[str]:
    node = schema
    for key in path:
        node = node["properties"][key]
    return set(node["properties"])


def test_the_schemas_know_every_key_the_loader_knows() -> None:
    from promptspec.spec.readers.turns import COMPACTION_KEYS, HISTORY_PIECES, REPLY_KEYS, SKILLS_KEYS, TURNS_KEYS, UPDATE_KEYS

    spec, fragment, models, choice, tool = (load_schema(k) for k in ("spec", "fragment", "models", "choice", "tool"))
    assert set(spec["properties"]) == SPEC_KEYS
    assert set(tool["properties"]) == TOOL_KEYS
    assert _props(spec, "tools") == TOOLS_KEYS
    assert _props(spec, "request") == REQUEST_KEYS
    assert set(spec["properties"]["request"]["properties"]["rules"]["items"]["properties"]) == RULE_KEYS
    assert spec["properties"]["layout"]["properties"]["tools"]["anyOf"][0]["enum"] == list(TOOL_PLACES)
    assert set(spec["properties"]["request"]["properties"]["params"]["propertyNames"]["not"]["enum"]) == set(COMPUTED_BODY_KEYS)
    assert set(fragment["properties"]) == FRAGMENT_KEYS
    turns = spec["properties"]["turns"]
    assert set(turns["properties"]) == TURNS_KEYS
    assert set(turns["properties"]["updates"]["items"]["properties"]) == UPDATE_KEYS
    assert _props(spec, "turns", "compaction") == COMPACTION_KEYS
    assert _props(spec, "turns", "skills") == SKILLS_KEYS
    assert _props(spec, "turns", "reply") == REPLY_KEYS
    assert turns["properties"]["compaction"]["properties"]["history"]["items"]["anyOf"][0]["enum"] == list(HISTORY_PIECES)
    assert set(models["properties"]["models"]["items"]["properties"]) == MODEL_KEYS
    assert set(spec["$defs"]["choice"]["properties"]) == {"display_name", "description", "template", "engine"}
    assert set(spec["$defs"]["personality"]["properties"]) == {"display_name", "description", "template", "engine", "fills", "removes_section"}
    assert spec["$defs"]["personality"]["properties"] == choice["properties"]
    assert set(tool["properties"]["accept_lint"]["anyOf"][0]["enum"]) == set(ACCEPTABLE_LINT)
    assert set(spec["properties"]["derived"]["propertyNames"]["not"]["enum"]) == set(BUILTIN_NAMES)
    assert set(spec["properties"]["layouts"]["items"]["properties"]) == LAYOUT_KEYS
    assert _props(spec, "layout") == {*DEFAULT_LAYOUT, "tools"}
    assert _props(spec, "limits") == set(LIMIT_CEILINGS)
    assert {k: v["maximum"] for k, v in spec["properties"]["limits"]["properties"].items()} == dict(LIMIT_CEILINGS)
    assert fragment["properties"]["role"]["enum"] == list(ROLES)
    assert fragment["properties"]["engine"]["anyOf"][0]["enum"] == list(ENGINES)
    assert choice["properties"]["engine"]["anyOf"][0]["enum"] == list(ENGINES)
    name_pattern = spec["properties"]["roots"]["propertyNames"]["pattern"]
    assert name_pattern == "^(?!.*\\.\\.)" + NAME_RE.pattern[1:]


@pytest.mark.parametrize("name", ["a", "Harbor-5.1_x", "x" * 100, "x" * 101, "a..b", ".hidden", "-x", "a/b", "é"])
def test_the_name_rule_matches_the_loader(name: str) -> None:
    pattern = load_schema("spec")["properties"]["roots"]["propertyNames"]["pattern"]
    from promptspec.spec.readers.reader import check_name

    try:
        check_name(name, "spec.yaml", 1, "root")
        ok = True
    except SpecError:
        ok = False
    assert bool(re.search(pattern, name)) == ok


def test_the_embedded_spec_validates() -> None:
    docs, unparsed = _documents(TEMPLATES)
    assert not unparsed
    assert {kind for kind, _, _ in docs} == {"spec", "models", "fragment", "tool"}
    assert _schema_errors(docs) == {}
    # Its inline modes and personalities, against the separate choice schema.
    top = load_yaml(TEMPLATES / "spec.yaml")
    for key in ("modes", "personalities"):
        for body in top[key].values():
            assert not list(VALIDATORS["choice"].iter_errors(body))


def test_an_imported_codex_spec_validates(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "codex"
    require_shared(fixture / "codex-rs")
    from promptspec.importers.codex_source import import_codex

    spec = import_codex(fixture, tmp_path / "spec")
    docs, unparsed = _documents(spec)
    assert not unparsed and len(docs) > 3
    assert _schema_errors(docs) == {}


def test_the_fragment_scaffold_names_its_schema(tmp_path: Path) -> None:
    from promptspec.authoring.scaffold import new_fragment

    import shutil

    spec = shutil.copytree(TEMPLATES, tmp_path / "spec")
    new_fragment(spec, "my_hint", "developer")
    text = (spec / "fragments" / "my_hint.yaml").read_text(encoding="utf-8")
    assert text.splitlines()[0] == modeline("fragment") == f"# yaml-language-server: $schema={schema_url('fragment')}"
    assert schema_url("fragment").endswith("/fragment.schema.json")
    assert not list(VALIDATORS["fragment"].iter_errors(load_yaml(spec / "fragments" / "my_hint.yaml")))


def test_schema_ids_match_their_urls() -> None:
    for kind in KINDS:
        assert load_schema(kind)["$id"] == schema_url(kind)
        schema = load_schema(kind)
        assert json.loads(json.dumps(schema)) == schema  # plain JSON: survives a round trip unchanged
