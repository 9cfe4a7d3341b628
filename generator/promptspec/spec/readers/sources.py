"""Parsing spec files (YAML and JSON) with line numbers kept for error messages.

Only PyYAML's safe constructor is used: a spec may come from an untrusted
pull request, and `yaml.load` with the full loader can construct arbitrary
objects.  The text is scanned and parsed by libyaml where PyYAML has it (about
six times faster than its pure-Python scanner: a spec is read at every build,
render and serve rebuild); nodes are composed and constructed in Python as
before, so the limits below and the line of every key hold either way.  A
document libyaml finds an error in is read again by the pure-Python loader,
whose messages are the ones a spec author sees.
Mappings come back as `Located` dicts that remember the line of each key, so a
validation error much later can still say `spec.yaml:14`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from ...errors import SpecError
from ..files import not_text, read_regular_bytes, read_text_file


class Located(dict):  # type: ignore[type-arg]  # holds YAML/JSON values of any type
    """A dict that knows the 1-based line of itself and of each of its keys."""

    line: int | None = None
    key_lines: dict[Any, int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_lines = {}

    def line_of(self, key: Any) -> int | None:
        return self.key_lines.get(key, self.line)


MAX_YAML_NODES = 50_000
"""PyYAML's pure-Python loader takes ~30 us per value (libyaml's parser with
the Python composer ~5 us): 50,000 values (a hundred times a big spec file)
load in under two seconds, while a hostile 8 MB file of tiny values would
take a minute."""

MAX_YAML_EXPANDED = 4 * 1024 * 1024
"""How large a YAML document may become once its aliases are expanded (the
"billion laughs" document is a few hundred bytes that expand to 10**9)."""


class _Checks:
    """The node limit and the one-line errors of constructing, for both loaders."""

    nodes_seen = 0
    name: Any

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.nodes_seen += 1
        if self.nodes_seen > MAX_YAML_NODES:
            mark = self.peek_event().start_mark  # type: ignore[attr-defined]  # the loader's parser
            raise SpecError(
                f"YAML file has more than {MAX_YAML_NODES} values",
                self.name,
                line=mark.line + 1,
                hint="a spec file this large is almost certainly a mistake; split it",
            )
        return super().compose_node(parent, index)  # type: ignore[misc]  # the loader's composer

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)  # type: ignore[misc]  # the loader's constructor
        except (SpecError, yaml.YAMLError, RecursionError):
            raise
        except Exception as exc:  # noqa: BLE001 - PyYAML's constructors fail in many ways on bad input
            # e.g. a 5,000-digit integer, `2026-02-30`, `!!float abc`, `!!timestamp x`
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            if "digits" in str(exc):
                detail = "number too large"
            elif isinstance(exc, (ValueError, OverflowError)):
                detail = str(exc).split("\n")[0]
            else:
                detail = f"not a valid {tag} value"
            value = node.value if isinstance(node.value, str) else ""
            shown_value = f" {value if len(value) <= 40 else value[:40] + '...'!r}" if value else ""
            raise SpecError(
                f"invalid YAML value{shown_value}: {detail}",
                self.name,
                line=node.start_mark.line + 1,
                column=node.start_mark.column + 1,
                hint="quote it to make it a string",
            ) from None


class _Loader(_Checks, yaml.SafeLoader):
    """PyYAML's pure-Python safe loader: the reference, and the messages."""


try:
    from yaml._yaml import CParser  # PyYAML built with libyaml
except ImportError:  # pragma: no cover - PyYAML without libyaml: the pure-Python loader reads everything
    CParser = None  # type: ignore[assignment,misc]

_FAST = CParser is not None


class _FastLoader(_Checks, yaml.composer.Composer, CParser or yaml.parser.Parser,  # type: ignore[misc]  # never made without libyaml
                  yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """libyaml's scanner and parser under the Python composer and safe constructor."""

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


def _construct_mapping(loader: Any, node: yaml.MappingNode) -> Located:
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
_FastLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _fast_data(text: str, shown: str) -> Any:
    """The document through libyaml, or `_NOT_READ` where the pure-Python
    loader must read it: a character its reader refuses, or any YAML error
    (its messages are the ones said).  Limits and constructor errors are
    raised here as there (SpecError)."""
    if not _FAST or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return _NOT_READ
    loader = _FastLoader(text)
    loader.name = shown
    try:
        return loader.get_single_data()
    except yaml.YAMLError:
        return _NOT_READ
    finally:
        loader.dispose()


_NOT_READ = object()


def _read(path: Path, shown: str) -> str:
    """read_text_file, with errors naming the file as the spec does."""
    try:
        return read_text_file(path)
    except SpecError as exc:
        if exc.path != path:
            raise
        raise SpecError(exc.message, shown, line=exc.line, column=exc.column, hint=exc.hint) from None


def load_yaml(path: Path, display: str | None = None) -> Any:
    shown = display or str(path)
    text = _read(path, shown)
    loader: _Loader | None = None
    try:
        data = _fast_data(text, shown)
        if data is _NOT_READ:
            loader = _Loader(text)  # checks for unprintable characters already
            loader.name = shown
            data = loader.get_single_data()
        _check_expansion(data, shown)
        check_strings(data, shown)
        return data
    except SpecError:
        raise
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise SpecError(
            f"invalid YAML: unacceptable character #x{exc.character:04x}" if isinstance(exc.character, int) else f"invalid YAML: {exc.reason}",
            shown,
            line=line,
            hint="YAML files may not contain control characters; write them as escapes in a double-quoted string",
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        tag = re.search(r"constructor for the tag '(?:tag:yaml.org,2002:)?([^']*)'", problem)
        if tag:
            raise SpecError(
                f"YAML tag '!!{tag.group(1)}' is not allowed" if "tag:yaml.org" in problem else f"YAML tag '{tag.group(1)}' is not allowed",
                shown,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
                hint="spec files hold plain data: remove the tag",
            ) from None
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
        if loader is not None:
            loader.dispose()


def _check_expansion(data: Any, shown: str) -> None:
    """Refuse a document whose aliases expand it past MAX_YAML_EXPANDED
    values and characters: everything downstream (templates, cache keys,
    exports) walks values as if they were written out in full."""
    memo: dict[int, int] = {}

    def size(v: Any) -> int:
        if isinstance(v, (str, bytes)):
            return len(v) + 1
        if isinstance(v, dict):
            children: Any = [x for kv in v.items() for x in kv]
        elif isinstance(v, (list, tuple, set, frozenset)):
            children = v
        else:
            return 1
        key = id(v)
        if key not in memo:
            total = 1
            for child in children:
                total += size(child)
                if total > MAX_YAML_EXPANDED:
                    raise SpecError(
                        f"YAML expands to more than {MAX_YAML_EXPANDED} values (aliases repeated too often?)",
                        shown,
                        line=getattr(v, "line", None),
                        hint="use fewer '*alias' references",
                    )
            memo[key] = total
        return memo[key]

    size(data)


def check_strings(data: Any, shown: str) -> None:
    """The file rule (files.check_text) for every key and value: JSON and YAML
    escapes ("\\u0000", "\\r", "\\x1b", "\\ud800") must not bring in what the
    file's bytes may not hold.  Iterative: the data may nest deeply."""
    stack: list[tuple[Any, Any, int | None]] = [(data, None, getattr(data, "line", None))]
    while stack:
        value, key, line = stack.pop()
        if isinstance(value, str):
            found = not_text(value)
            if found is not None:
                name = f"'{key}'" if key is not None else "a value"
                raise SpecError(
                    f"{name} contains {found[0]}",
                    shown,
                    line=line,
                    hint="prompt text must be plain LF-terminated text; remove the escape",
                )
        elif isinstance(value, dict):
            for k, v in value.items():
                kline = value.line_of(k) if isinstance(value, Located) else line
                stack.append((k, k, kline))
                stack.append((v, k, kline))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, key, getattr(v, "line", line)) for v in value)


def load_json(path: Path, display: str | None = None) -> Any:
    shown = display or str(path)
    text = _read(path, shown)

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
        data = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
        check_strings(data, shown)
        return data
    except json.JSONDecodeError as exc:
        raise SpecError(
            f"invalid JSON: {exc.msg}", shown, line=exc.lineno, column=exc.colno, hint="fix the JSON syntax"
        ) from None
    except ValueError as exc:  # a number with more than 4,300 digits
        detail = "number too large" if "digits" in str(exc) else str(exc).split("\n")[0]
        raise SpecError(f"invalid JSON: {detail}", shown, hint="use a smaller number") from None
    except RecursionError:
        raise SpecError("JSON nests too deeply", shown) from None


class LineFinder:
    """Lines of needles that occur in file order (the models of models.json),
    found in one forward pass: `find_line` per model reread and rescanned the
    file, quadratic in its size (a 5 MB catalog took minutes)."""

    def __init__(self, path: Path):
        try:
            self.text = read_regular_bytes(path).decode("utf-8", "replace")
        except SpecError:
            self.text = ""
        self.pos = 0
        self.line = 1

    def line_of(self, needle: str) -> int | None:
        at = self.text.find(needle, self.pos)
        if at < 0:
            return None  # written with escapes, or out of order: no line rather than a rescan
        self.line += self.text.count("\n", self.pos, at)
        self.pos = at
        return self.line


def find_line(path: Path, needle: str) -> int | None:
    """Best-effort line of the first occurrence of `needle` (JSON keeps no marks)."""
    try:
        text = read_regular_bytes(path).decode("utf-8", "replace")
    except SpecError:
        return None
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1
