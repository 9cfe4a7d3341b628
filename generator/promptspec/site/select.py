"""Which variants get a static page of their own (the `variant_pages` option).

A page per variant costs MkDocs tens of milliseconds, so a matrix of 10,000
variants would spend minutes on pages few people open.  The explorer page
shows any variant from one data file, so a site can publish only some
variants as static pages (or none) and link every other one to the
explorer's deep link instead.  The option is one of

* `auto` (default): every variant while the matrix has at most AUTO_LIMIT
  variants, none above;
* `all` / `none`;
* a filter: axis -> value or list of values, each a value or a glob
  (`{mode: plan}`, `{model: "harbor-5*", mode: [plan, execute]}`).  A
  variant gets a page when, on every axis named, its value matches one of
  the patterns.

`promptspec build --variant-pages` takes the same as `all`, `none`, `auto`
or `AXIS=VALUE[,VALUE...]` (repeatable, one axis each).

Parsing (`parse`, `parse_cli`) checks the shape; `select` checks axis names
and patterns against the spec, because a filter that names no real value is
a typo, not a wish for an empty site.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..errors import UsageError
from ..spec.model import When

AUTO_LIMIT = 1000
"""`auto` publishes a page per variant up to this many variants."""
KEYWORDS = ("auto", "all", "none")


@dataclass(frozen=True)
class VariantPages:
    mode: str  # "auto" | "all" | "none" | "filter"
    filters: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def describe(self) -> str:
        if self.mode != "filter":
            return self.mode
        return "; ".join(f"{axis}={','.join(pats)}" for axis, pats in self.filters)


AUTO = VariantPages("auto")


def _pattern(axis: str, value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UsageError(f"{where}: the value(s) for axis {axis!r} must be strings (values or globs), found {value!r}")
    text = str(value).strip()
    if not text:
        raise UsageError(f"{where}: empty value for axis {axis!r}")
    return text


def parse(value: Any, *, where: str = "option 'variant_pages'") -> VariantPages:
    """The plugin option: a keyword, or a mapping axis -> value(s)/glob(s)."""
    if value is None:
        return AUTO
    if isinstance(value, str):
        word = value.strip().lower()
        if word in KEYWORDS:
            return VariantPages(word)
        raise UsageError(f"{where}: expected auto, all, none or a mapping of axis to values (e.g. {{mode: plan}}), found {value!r}")
    if isinstance(value, Mapping):
        if not value:
            raise UsageError(f"{where}: an empty filter selects nothing; use none instead")
        filters = []
        for axis, pats in value.items():
            if not isinstance(axis, str) or not axis.strip():
                raise UsageError(f"{where}: axis names must be strings, found {axis!r}")
            items = pats if isinstance(pats, (list, tuple)) else [pats]
            if not items:
                raise UsageError(f"{where}: no values given for axis {axis!r}")
            filters.append((axis.strip(), tuple(_pattern(axis, p, where) for p in items)))
        return VariantPages("filter", tuple(sorted(filters)))
    raise UsageError(f"{where}: expected auto, all, none or a mapping of axis to values, found {type(value).__name__}")


def parse_cli(items: Sequence[str] | None) -> VariantPages:
    """`--variant-pages` values: one keyword, or AXIS=VALUE[,VALUE...] items."""
    where = "--variant-pages"
    if not items:
        return AUTO
    words = [i.strip() for i in items]
    keywords = [w for w in words if w.lower() in KEYWORDS]
    if keywords:
        if len(words) > 1:
            raise UsageError(f"{where}: {keywords[0]} cannot be combined with other --variant-pages values")
        return VariantPages(keywords[0].lower())
    mapping = axis_items(words, where, "auto, all, none or AXIS=VALUE[,VALUE...]")
    return parse({axis: values or [""] for axis, values in mapping.items()}, where=where)


def axis_items(items: Sequence[str], where: str, expected: str = "AXIS=VALUE[,VALUE...]") -> dict[str, list[str]]:
    """Command-line items AXIS=VALUE[,VALUE...], one axis each, as {axis: its
    non-blank values} (`--variant-pages`, `import-codex --only`); what the
    axes and values may be is the caller's to check."""
    mapping: dict[str, list[str]] = {}
    for item in items:
        axis, sep, values = item.partition("=")
        if not sep or not axis.strip():
            raise UsageError(f"{where}: expected {expected}, found {item!r}")
        if axis.strip() in mapping:
            raise UsageError(f"{where}: axis {axis.strip()!r} is given twice; list its values once, comma-separated")
        mapping[axis.strip()] = [v for v in values.split(",") if v.strip()]
    return mapping


def select(option: VariantPages, variants: Sequence[Any], axes: Iterable[tuple[str, Sequence[str]]], *, where: str = "variant_pages") -> frozenset | None:
    """The variants that get a page; None means every variant."""
    if option.mode == "all" or (option.mode == "auto" and len(variants) <= AUTO_LIMIT):
        return None
    if option.mode in ("none", "auto"):
        return frozenset()
    values = dict(axes)
    for axis, pats in option.filters:
        if axis not in values:
            raise UsageError(f"{where}: the spec has no axis {axis!r} (axes: {', '.join(values)})")
        for pat in pats:
            if not any(fnmatch.fnmatchcase(x, pat) for x in values[axis]):
                shown = ", ".join(values[axis][:12]) + (", ..." if len(values[axis]) > 12 else "")
                raise UsageError(f"{where}: no value of axis {axis!r} matches {pat!r} (values: {shown})")
    when = When(dict(option.filters))
    return frozenset(v for v in variants if when.matches(v))
