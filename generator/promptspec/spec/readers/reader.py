"""Validation helpers shared by the spec loaders: each error names the file and
line and says what to do, because a spec is edited by hand.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Collection, Iterable

from ...errors import SpecError
from ..model import MODEL_FIELDS, NAME_RE, When
from .sources import Located

if TYPE_CHECKING:
    from ..model import Model

# ---------------------------------------------------------------------------
# Small validation helpers: each raises a SpecError with file and line.


class Reader:
    def __init__(self, data: Any, where: str, what: str):
        self.where = where
        if not isinstance(data, dict):
            raise SpecError(
                f"{what} must be a mapping, found {typename(data)}",
                where,
                line=getattr(data, "line", None),
            )
        self.data = data

    def line(self, key: str | None = None) -> int | None:
        if isinstance(self.data, Located):
            return self.data.line_of(key) if key is not None else self.data.line
        return None

    def err(self, key: str | None, message: str, hint: str | None = None) -> SpecError:
        return SpecError(message, self.where, line=self.line(key), hint=hint)

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, *, required: bool = False) -> Any:
        if key not in self.data or self.data[key] is None:
            if required:
                raise self.err(None, f"missing required key '{key}'", hint=f"add '{key}:'")
            return default
        value = self.data[key]
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.err(key, f"'{key}' must be {_names(types)}, found a boolean")
        if not isinstance(value, types):
            raise self.err(key, f"'{key}' must be {_names(types)}, found {typename(value)}")
        return value

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> Any:
        return self.get(key, str, default, required=required)

    def str_list(self, key: str, default: Iterable[str] = ()) -> tuple[str, ...]:
        value = self.get(key, (list, str), None)
        if value is None:
            return tuple(default)
        if isinstance(value, str):
            value = [value]
        for item in value:
            if not isinstance(item, str):
                raise self.err(key, f"'{key}' must be a list of strings, found {typename(item)} in it")
        return tuple(value)

    def unknown(self, allowed: Iterable[str], what: str) -> None:
        extra = sorted(set(map(str, self.data)) - set(allowed))
        if extra:
            raise self.err(
                extra[0],
                f"unknown key '{extra[0]}' in {what}",
                hint=f"allowed keys: {', '.join(sorted(allowed))}",
            )


def read_when(r: Reader, key: str = "when", *, axes: Collection[str], models: "Iterable[Model]",
              what: str | None = None) -> When:
    """The one reader of a `when:` condition (see docs/spec-format.md, "Conditions")."""
    raw = r.get(key, dict, {}) or {}
    return parse_when(raw, r.where, r.line(key), axes=axes, models=models, what=what or f"'{key}'")


def parse_when(raw: Any, where: str, line: int | None, *, axes: Collection[str], models: "Iterable[Model]",
               what: str = "'when'") -> When:
    """A mapping of name -> value or list of values (fnmatch patterns).  A
    name is an axis, else a models.json field; a value that is not a string
    (YAML `true`, `12`, `null`) stands for its JSON spelling, the way a field
    is compared.  Every name is checked here, at load, so a typo is an error
    naming the file and line, wherever the condition is written."""
    wr = Reader(raw, where, what)
    fields = set(MODEL_FIELDS) | {k for m in models for k in m.extra}
    terms: dict[str, tuple[str, ...]] = {}
    field_names: set[str] = set()
    for name, value in raw.items():
        name = str(name)
        at = line if line is not None else wr.line(name)
        if name not in axes:
            if name not in fields:
                raise SpecError(
                    f"{what} names {name!r}, which is neither an axis nor a field of any model",
                    where, line=at,
                    hint=f"axes: {', '.join(sorted(axes))}; or a models.json field such as shell_type",
                )
            field_names.add(name)
        patterns = []
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, (bool, int, float)) or v is None:
                v = json.dumps(v)
            if not isinstance(v, str):
                raise SpecError(f"{what}: '{name}' must be a value or a list of values, found {typename(v)} in it",
                                where, line=at)
            patterns.append(v)
        terms[name] = tuple(patterns)
    return When(terms, frozenset(field_names))


def typename(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", Located: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _names(types: type | tuple[type, ...]) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(typename(t()) if t is not type(None) else "null" for t in types)


def check_name(name: Any, where: str, line: int | None, what: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or ".." in name:
        raise SpecError(
            f"{what} name {name!r} is not a safe name",
            where,
            line=line,
            hint="use letters, digits, '.', '_' or '-' only (it becomes a file name and URL)",
        )
    return name


def check_unique_slugs(names: Iterable[tuple[str, int | None]], where: str, what: str) -> None:
    """Names become URLs on case-insensitive file systems too: `A` and `a` clash."""
    seen: dict[str, str] = {}
    for name, line in names:
        key = name.lower()
        if key in seen:
            raise SpecError(
                f"{what} {name!r} clashes with {seen[key]!r} (names must differ in more than letter case)",
                where,
                line=line,
                hint="rename one of them",
            )
        seen[key] = name


# ---------------------------------------------------------------------------
# models.json


