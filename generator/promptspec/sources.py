"""Parsing spec files (YAML and JSON) with line numbers kept for error messages.

Only PyYAML's safe loader is used: a spec may come from an untrusted pull
request, and `yaml.load` with the full loader can construct arbitrary objects.
Mappings come back as `Located` dicts that remember the line of each key, so a
validation error much later can still say `spec.yaml:14`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError
from .templating import read_text_file


class Located(dict):
    """A dict that knows the 1-based line of itself and of each of its keys."""

    line: int | None = None
    key_lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines = {}

    def line_of(self, key: Any) -> int | None:
        return self.key_lines.get(key, self.line)


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> Located:
    loader.flatten_mapping(node)
    out = Located()
    out.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise SpecError(
                "mapping key is not a plain value", loader.name, line=key_node.start_mark.line + 1
            ) from None
        if key in out:
            raise SpecError(
                f"duplicate key {key!r}",
                loader.name,
                line=key_node.start_mark.line + 1,
                column=key_node.start_mark.column + 1,
                hint="each key may appear once",
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(path: Path, display: str | None = None) -> Any:
    shown = display or str(path)
    text = read_text_file(path)
    loader = _Loader(text)
    loader.name = shown
    try:
        return loader.get_single_data()
    except SpecError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        raise SpecError(
            f"invalid YAML: {problem}",
            shown,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
            hint="fix the YAML syntax",
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"invalid YAML: {exc}", shown, hint="fix the YAML syntax") from None
    except RecursionError:
        raise SpecError("YAML nests too deeply", shown) from None
    finally:
        loader.dispose()


def load_json(path: Path, display: str | None = None) -> Any:
    shown = display or str(path)
    text = read_text_file(path)

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise SpecError(f"duplicate key {key!r}", shown, hint="each key may appear once")
            out[key] = value
        return out

    def no_constants(name: str) -> Any:
        raise SpecError(f"invalid JSON: {name} is not allowed", shown, hint="use a number or null")

    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise SpecError(
            f"invalid JSON: {exc.msg}", shown, line=exc.lineno, column=exc.colno, hint="fix the JSON syntax"
        ) from None
    except RecursionError:
        raise SpecError("JSON nests too deeply", shown) from None


def find_line(path: Path, needle: str) -> int | None:
    """Best-effort line of the first occurrence of `needle` (JSON keeps no marks)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1
