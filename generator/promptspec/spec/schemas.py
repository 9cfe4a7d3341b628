"""The JSON Schemas of the spec's files, for editors and pre-commit.

The loader (load.py, catalog.py) is the authority: it checks things no
schema can (files exist and stay inside the spec folder, names differ in more
than letter case, fragments name known slots) and says where, by line. The
schemas describe the same shapes for tools that know nothing of promptspec:
editor completion through yaml-language-server, `check-jsonschema` in
pre-commit. tests/spec/test_schema.py keeps the two in step, on the bad-input
corpus and on every key the loader knows.

The files live in `schema/` beside this module and ship in the wheel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError

FOLDER = Path(__file__).resolve().parent / "schema"
BASE_URL = "https://raw.githubusercontent.com/promptspec/promptspec/main/generator/promptspec/spec/schema/"
"""Where the schemas are published: each file's `$id` is BASE_URL + its name."""

KINDS = {
    "spec": "spec.yaml, the top of a spec folder",
    "fragment": "a fragment definition, fragments/NAME.yaml",
    "choice": "one entry under modes: or personalities: in spec.yaml",
    "models": "the Codex-style models.json catalog",
    "tool": "a tool definition file, tools/NAME.yaml or tools/NAME.json",
}
ALIASES = {"mode": "choice", "personality": "choice", "spec.yaml": "spec", "models.json": "models"}


def kind_of(name: str) -> str:
    kind = ALIASES.get(name, name)
    if kind not in KINDS:
        raise UsageError(f"unknown schema kind {name!r}; choose one of: {', '.join([*KINDS, *ALIASES])}")
    return kind


def schema_path(kind: str) -> Path:
    return FOLDER / f"{kind_of(kind)}.schema.json"


def schema_text(kind: str) -> str:
    return schema_path(kind).read_text(encoding="utf-8")


def load_schema(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(schema_text(kind))
    return data


def schema_url(kind: str) -> str:
    return BASE_URL + schema_path(kind).name


def modeline(kind: str) -> str:
    """The first line of a YAML file that tells yaml-language-server (VS Code's
    YAML extension, Neovim, Helix...) which schema to complete and check with."""
    return f"# yaml-language-server: $schema={schema_url(kind)}"
