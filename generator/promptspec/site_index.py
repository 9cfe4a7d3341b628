"""Where each generated page lives, how pages link to each other, and the
lookups every page needs (measures by variant, variants by axis value...).

Links inside raw HTML blocks are not rewritten by MkDocs, so they are written
for the URL style of the target: `md` (links between .md files, for other
site engines and for the plain folder), `dir` (MkDocs `use_directory_urls`,
`a/b.md` -> `a/b/`) or `html` (`a/b.md` -> `a/b.html`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Sequence

from .assemble import Request, Section, Variant
from .errors import UsageError
from .measure import Measure
from .pipeline import Result

LINK_STYLES = ("md", "dir", "html")
ASSET_DIR = "assets/promptspec"
CSS = f"{ASSET_DIR}/promptspec.css"
JS = f"{ASSET_DIR}/promptspec.js"

AXIS_FOLDERS = {"model": "models", "personality": "personalities", "mode": "modes"}
AXIS_TITLES = {"model": "Models", "personality": "Personalities", "mode": "Modes"}
_RESERVED = {"index", "readme"}


def file_name(name: str) -> str:
    """A page file name for a spec name. `index`/`README` would collide with a
    folder's overview page; spec names never start with `_`, so `_index` is free."""
    return f"_{name}" if name.lower() in _RESERVED else name


def page_url(src: str, style: str) -> str:
    """The URL (relative to the site root) MkDocs gives the page `src`."""
    if style == "md" or not src.endswith(".md"):
        return src
    stem = src[:-3]
    base = posixpath.basename(stem)
    if style == "html":
        return stem + ".html"
    if base == "index":
        parent = posixpath.dirname(stem)
        return parent + "/" if parent else ""
    return stem + "/"


def relative(from_src: str, to_src: str, style: str, anchor: str | None = None) -> str:
    """A relative link from page `from_src` to file `to_src`."""
    to_url = page_url(to_src, style)
    from_url = page_url(from_src, style)
    # The folder a relative link resolves against: the URL itself for a
    # directory URL, else the folder holding the file.
    is_dir = from_url == "" or from_url.endswith("/")
    from_dir = from_url.rstrip("/") if is_dir else posixpath.dirname(from_url)
    rel = posixpath.relpath(to_url.rstrip("/") or ".", from_dir or ".")
    if to_url == "" or to_url.endswith("/"):
        rel = "./" if rel == "." else rel + "/"
    if anchor:
        rel += "#" + anchor
    return rel


@dataclass(frozen=True)
class SectionUse:
    """One section of one variant: where it sits and what it costs."""

    variant: Variant
    message: int
    index: int  # 1-based within its message
    section: Section
    tokens: int
    estimate: int


class Paths:
    """Where every page lives under `prefix`, and links between them."""

    def __init__(self, prefix: str = "prompts", links: str = "md"):
        if links not in LINK_STYLES:
            raise ValueError(f"link style must be one of {LINK_STYLES}")
        self.prefix = prefix.strip("/")
        parts = self.prefix.split("/")
        if not self.prefix or prefix.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in prefix:
            raise UsageError(f"the pages' folder must be a relative path inside the site, found {prefix!r}")
        self.links = links

    def _p(self, *parts: str) -> str:
        return posixpath.join(self.prefix, *parts) if self.prefix else posixpath.join(*parts)

    @property
    def matrix_page(self) -> str:
        return self._p("index.md")

    @property
    def assembly_page(self) -> str:
        return self._p("assembly.md")

    @property
    def lint_page(self) -> str:
        return self._p("lint.md")

    @property
    def changes_page(self) -> str:
        return self._p("changes.md")

    def variant_page(self, v: Variant) -> str:
        return self._p("variants", file_name(v.slug) + ".md")

    def variant_json(self, v: Variant) -> str:
        return self._p("variants", file_name(v.slug) + ".json")

    def axis_folder(self, axis: str) -> str:
        return AXIS_FOLDERS.get(axis) or posixpath.join("axes", axis)

    def axis_page(self, axis: str, value: str | None = None) -> str:
        return self._p(self.axis_folder(axis), "index.md" if value is None else file_name(value) + ".md")

    def fragment_page(self, name: str | None = None) -> str:
        return self._p("fragments", "index.md" if name is None else file_name(name) + ".md")

    def href(self, from_src: str, to_src: str, anchor: str | None = None) -> str:
        return relative(from_src, to_src, self.links, anchor)


class SiteIndex(Paths):
    """A Result plus paths, links and lookups, shared by every page renderer.

    `findings` are the lint findings of `result`; `rules_page` is the site path
    of the lint rules reference (`guide/lint-rules.md`), or None when the site
    has no such page (rule IDs are then shown without a link); `changes` is the
    comparison with the base (site_changes.Changes), or None for none."""

    def __init__(
        self,
        result: Result,
        *,
        prefix: str = "prompts",
        links: str = "md",
        findings: Sequence[Any] = (),
        rules_page: str | None = None,
        changes: Any = None,
    ):
        super().__init__(prefix, links)
        self.result = result
        self.findings = tuple(findings)
        self.rules_page = rules_page
        self.changes = changes
        self.spec = result.spec
        self.variants: list[Variant] = list(result.variants)
        self.measure: dict[Variant, Measure] = {m.request.variant: m for m in result.measures}
        self.request: dict[Variant, Request] = {r.variant: r for r in result.requests}
        self.axes: tuple[tuple[str, tuple[str, ...]], ...] = self.spec.axes
        self._by_values = {v.values: v for v in self.variants}

    # -- lookups --------------------------------------------------------------
    @cached_property
    def by_id(self) -> dict[str, Variant]:
        """Variants by id (`m/p/mode[/extra]`), for findings and changes that name them."""
        return {v.id: v for v in self.variants}

    def variant(self, values: Iterable[tuple[str, str]]) -> Variant | None:
        return self._by_values.get(tuple(values))

    def sibling(self, v: Variant, axis: str, value: str) -> Variant | None:
        """The variant equal to `v` except that `axis` is `value` (None if excluded)."""
        return self.variant((a, value if a == axis else x) for a, x in v.values)

    def with_value(self, axis: str, value: str) -> list[Variant]:
        return [v for v in self.variants if v.value(axis) == value]

    def others(self, v: Variant, axis: str) -> tuple[tuple[str, str], ...]:
        """`v`'s values on every axis but `axis`."""
        return tuple((a, x) for a, x in v.values if a != axis)

    def uses(self, v: Variant) -> list[SectionUse]:
        m = self.measure[v]
        req = self.request[v]
        out = []
        for i, message in enumerate(req.messages):
            for j, section in enumerate(message.sections):
                out.append(SectionUse(v, i, j + 1, section, m.sections[i][j], m.estimates[i][j]))
        return out

    @cached_property
    def fragment_uses(self) -> dict[str, list[SectionUse]]:
        """Every section a fragment produced, in matrix order."""
        out: dict[str, list[SectionUse]] = {f.name: [] for f in self.spec.fragments}
        for v in self.variants:
            for use in self.uses(v):
                out.setdefault(use.section.fragment, []).append(use)
        return out

    def sections_by_fragment(self, v: Variant) -> dict[str, SectionUse]:
        return {u.section.fragment: u for u in self.uses(v)}

    def display(self, axis: str, value: str) -> str:
        """A value's display name (models and choices have one; extra axes don't)."""
        if axis == "model":
            return self.spec.model(value).display_name
        if axis == "personality":
            return self.spec.personality(value).display_name
        if axis == "mode":
            return self.spec.mode(value).display_name
        return value

    def description(self, axis: str, value: str) -> str:
        if axis == "model":
            return self.spec.model(value).description
        if axis == "personality":
            return self.spec.personality(value).description
        if axis == "mode":
            return self.spec.mode(value).description
        return ""

    def title(self, v: Variant) -> str:
        """A variant's page title: its axis values (safe names) joined by ' · '."""
        return " · ".join(x for _, x in v.values)

    @cached_property
    def token_range(self) -> tuple[int, int]:
        totals = [self.measure[v].total for v in self.variants] or [0]
        return min(totals), max(totals)

    def heat(self, tokens: int, buckets: int = 6) -> int:
        """Shade bucket 0..buckets-1 of a total within the matrix's range."""
        lo, hi = self.token_range
        if hi <= lo:
            return 0
        return min(buckets - 1, (tokens - lo) * buckets // (hi - lo + 1))


def spread(values: Sequence[int]) -> str:
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"
