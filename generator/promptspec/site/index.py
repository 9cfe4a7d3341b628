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
from urllib.parse import quote

from ..assemble.request import Request, Section, Variant
from ..errors import UsageError
from ..measure.figures import Measure
from ..pipeline import Result
from .explorer.data import DATA_FILE

TOTALS_FILE = "totals.json"
"""Beside the explorer's data: a folder of generated files only (variant downloads are under variants/)."""

LINK_STYLES = ("md", "dir", "html")
ASSET_DIR = "assets/promptspec"
CSS = f"{ASSET_DIR}/promptspec.css"
JS = f"{ASSET_DIR}/promptspec.js"

LIST_LIMIT = 200
"""Overview pages list variants one by one while a list (or a page's set of
comparison rows) holds at most this many; above it they show summaries and
link to the explorer (summary.py).  The matrix page keeps its
one-cell-per-variant table up to MATRIX_FACTOR times this many variants."""
MATRIX_FACTOR = 5

DIAGRAMS = ("html", "mermaid")
"""How pages draw diagrams: promptspec's own HTML boxes (diagram.py, works
offline and in dark mode) or Mermaid text (mermaid.py; a site opts in)."""

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


def _base_of(from_src: str, style: str) -> tuple[str, ...]:
    """The folder a relative link on page `from_src` resolves against, as
    parts: the URL itself for a directory URL, else the folder holding the file."""
    from_url = page_url(from_src, style)
    is_dir = from_url == "" or from_url.endswith("/")
    from_dir = from_url.rstrip("/") if is_dir else posixpath.dirname(from_url)
    return tuple(p for p in from_dir.split("/") if p)


def _target_of(to_src: str, style: str) -> tuple[tuple[str, ...], bool]:
    """A link target's URL as parts, and whether it is a directory URL."""
    to_url = page_url(to_src, style)
    return tuple(p for p in to_url.rstrip("/").split("/") if p), to_url == "" or to_url.endswith("/")


def _join_rel(base: tuple[str, ...], target: tuple[str, ...], is_dir: bool) -> str:
    # posixpath.relpath for site paths (relative, normalised, no `.` or `..`
    # parts), without its abspath/getcwd calls: a build makes ~50 links a page.
    i = 0
    n = min(len(base), len(target))
    while i < n and base[i] == target[i]:
        i += 1
    parts = [".."] * (len(base) - i) + list(target[i:])
    rel = "/".join(parts) if parts else "."
    if is_dir:
        rel = "./" if rel == "." else rel + "/"
    return rel


def relative(from_src: str, to_src: str, style: str, anchor: str | None = None) -> str:
    """A relative link from page `from_src` to file `to_src`."""
    rel = _join_rel(_base_of(from_src, style), *_target_of(to_src, style))
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
        self._bases: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {}
        self._targets: dict[str, tuple[tuple[str, ...], bool]] = {}
        self._shared: dict[tuple[Any, str], str] = {}
        self._variant_pages: dict[Variant, str] = {}

    def _p(self, *parts: str) -> str:
        return posixpath.join(self.prefix, *parts) if self.prefix else posixpath.join(*parts)

    def page_path(self, *parts: str) -> str:
        """A site path under the pages' folder, for a page kind's own pages."""
        return self._p(*parts)

    @property
    def matrix_page(self) -> str:
        return self._p("index.md")

    @property
    def assembly_page(self) -> str:
        return self._p("assembly.md")

    @property
    def explorer_page(self) -> str:
        return self._p("explorer", "index.md")

    @property
    def explorer_data(self) -> str:
        return self._p("explorer", DATA_FILE)

    @property
    def totals_file(self) -> str:
        """Every variant's total tokens, sorted: what a variant page's script
        reads to say where the variant ranks (variant.place_line)."""
        return self._p("explorer", TOTALS_FILE)

    @property
    def lint_page(self) -> str:
        return self._p("lint.md")

    @property
    def changes_page(self) -> str:
        return self._p("changes.md")

    @property
    def conformance_page(self) -> str:
        return self._p("conformance.md")

    def variant_page(self, v: Variant) -> str:
        found = self._variant_pages.get(v)
        if found is None:
            found = self._variant_pages[v] = self._p("variants", file_name(v.slug) + ".md")
        return found

    def variant_json(self, v: Variant) -> str:
        return self._p("variants", file_name(v.slug) + ".json")

    def axis_folder(self, axis: str) -> str:
        return AXIS_FOLDERS.get(axis) or posixpath.join("axes", axis)

    def axis_page(self, axis: str, value: str | None = None) -> str:
        return self._p(self.axis_folder(axis), "index.md" if value is None else file_name(value) + ".md")

    def fragment_page(self, name: str | None = None) -> str:
        return self._p("fragments", "index.md" if name is None else file_name(name) + ".md")

    def tool_page(self, name: str | None = None) -> str:
        return self._p("tools", "index.md" if name is None else file_name(name) + ".md")

    def conversation_page(self, name: str | None = None) -> str:
        return self._p("conversations", "index.md" if name is None else file_name(name) + ".md")

    def href(self, from_src: str, to_src: str, anchor: str | None = None) -> str:
        """relative(), with the pages' and targets' URLs worked out once each.

        A link to a target outside the folder the page's links resolve
        against depends only on that folder's parent: every variant page
        links to every other variant with the same string, so it is made once
        (a large site makes ~60 such links a page)."""
        found = self._bases.get(from_src)
        if found is None:
            b = _base_of(from_src, self.links)
            found = self._bases[from_src] = (b, b[:-1] if b else None)
        base, parent = found
        target = self._targets.get(to_src)
        if target is None:
            target = self._targets[to_src] = _target_of(to_src, self.links)
        parts = target[0]
        n = len(base)
        if n and (len(parts) < n or parts[n - 1] != base[-1] or parts[: n - 1] != parent):
            key = (parent, to_src)
            rel = self._shared.get(key)
            if rel is None:
                rel = self._shared[key] = _join_rel(base, *target)
        else:
            rel = _join_rel(base, *target)
        if not anchor:
            return rel
        return rel + anchor if anchor[0] == "?" else rel + "#" + anchor  # "?..." is a query (explorer_href)

    def explorer_href(self, from_src: str, v: Variant | None = None) -> str:
        """The explorer page, opened at variant `v` (its deep link `?variant=<id>`:
        a query, not an #anchor, which site engines such as Zensical check
        against the page's headings)."""
        return self.href(from_src, self.explorer_page, None if v is None else explorer_query(v))


def explorer_query(v: Variant) -> str:
    """The explorer's deep link to `v` as a query, not an #anchor: site
    engines such as Zensical check anchors against the page's headings."""
    return "?variant=" + quote(v.id, safe="/")


USES_KEPT = "kept-uses"
"""memo key of a dict kept across builds (build.PageCache under `mkdocs serve`):
each variant's SectionUse list with the Request and Measure it was made from."""


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
        pages: frozenset[Variant] | None = None,
        list_limit: int = LIST_LIMIT,
        diagrams: str = "html",
        conformance: Any = None,
    ):
        super().__init__(prefix, links)
        if diagrams not in DIAGRAMS:
            raise UsageError(f"diagrams must be one of {', '.join(DIAGRAMS)}, found {diagrams!r}")
        self.diagrams = diagrams
        if list_limit < 1:
            raise UsageError(f"the list limit must be at least 1, found {list_limit}")
        self.pages = pages
        self.list_limit = list_limit
        self.matrix_limit = MATRIX_FACTOR * list_limit
        self.result = result
        self.findings = tuple(findings)
        self.rules_page = rules_page
        self.changes = changes
        self.conformance = conformance  # site.conformance.Conformance from a stored verify report, or None
        self.spec = result.spec
        self.variants: list[Variant] = list(result.variants)
        self.measure: dict[Variant, Measure] = {m.request.variant: m for m in result.measures}
        self.request: dict[Variant, Request] = {r.variant: r for r in result.requests}
        self.axes: tuple[tuple[str, tuple[str, ...]], ...] = self.spec.axes
        self._by_values = {v.values: v for v in self.variants}
        self._sections: dict[Variant, dict[str, SectionUse]] = {}
        self._uses: dict[Variant, list[SectionUse]] = {}
        self._others: dict[str, dict[str, dict[tuple[tuple[str, str], ...], Variant]]] = {}
        self.memo: dict[Any, Any] = {}  # page renderers' shared results (e.g. comparisons, computed once per pair)

    # -- pages and links to variants ------------------------------------------
    def has_page(self, v: Variant) -> bool:
        return self.pages is None or v in self.pages

    @property
    def variant_page_count(self) -> int:
        return len(self.variants) if self.pages is None else len(self.pages)

    def variant_href(self, from_src: str, v: Variant) -> str:
        """A link to `v`: its page if it has one, else the explorer at `v`."""
        return self.href(from_src, *self.variant_target(v))

    def variant_target(self, v: Variant) -> tuple[str, str | None]:
        """(page, anchor) a link to `v` points at: its page, else the explorer at `v`."""
        if self.has_page(v):
            return self.variant_page(v), None
        return self.explorer_page, explorer_query(v)

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

    @cached_property
    def _by_axis_value(self) -> dict[str, dict[str, list[Variant]]]:
        out: dict[str, dict[str, list[Variant]]] = {a: {x: [] for x in vals} for a, vals in self.axes}
        for v in self.variants:
            for a, x in v.values:
                out[a].setdefault(x, []).append(v)
        return out

    def with_value(self, axis: str, value: str) -> list[Variant]:
        """The variants with `value` on `axis`, in matrix order."""
        return list(self._by_axis_value.get(axis, {}).get(value, ()))

    def by_others(self, axis: str) -> dict[str, dict[tuple[tuple[str, str], ...], Variant]]:
        """value of `axis` -> {the variant's values on every other axis: variant},
        so counterparts along `axis` are one lookup each."""
        found = self._others.get(axis)
        if found is None:
            found = {x: {} for x in dict(self.axes)[axis]}
            for v in self.variants:
                found.setdefault(v.value(axis), {})[self.others(v, axis)] = v
            self._others[axis] = found
        return found

    def others(self, v: Variant, axis: str) -> tuple[tuple[str, str], ...]:
        """`v`'s values on every axis but `axis`."""
        return tuple((a, x) for a, x in v.values if a != axis)

    def uses(self, v: Variant) -> list[SectionUse]:
        """`v`'s sections in send order (kept: callers must not change the list;
        and across builds while its Request and Measure are the same objects,
        when memo holds USES_KEPT)."""
        out = self._uses.get(v)
        if out is not None:
            return out
        m = self.measure[v]
        req = self.request[v]
        kept = self.memo.get(USES_KEPT)
        hit = kept.get(v) if kept is not None else None
        if hit is not None and hit[0] is req and hit[1] is m:
            out = self._uses[v] = hit[2]
            return out
        out = self._uses[v] = []
        for i, message in enumerate(req.messages):
            for j, section in enumerate(message.sections):
                out.append(SectionUse(v, i, j + 1, section, m.sections[i][j], m.estimates[i][j]))
        if kept is not None:
            kept[v] = (req, m, out)  # holds both: their ids cannot be reused while kept
        return out

    @cached_property
    def totals(self) -> dict[Variant, int]:
        """Total tokens by variant (Measure.total adds up every time)."""
        return {v: m.total for v, m in self.measure.items()}

    @cached_property
    def fragment_uses(self) -> dict[str, list[SectionUse]]:
        """Every section a fragment produced, in matrix order."""
        out: dict[str, list[SectionUse]] = {f.name: [] for f in self.spec.fragments}
        for v in self.variants:
            for use in self.uses(v):
                out.setdefault(use.section.fragment, []).append(use)
        return out

    def sections_by_fragment(self, v: Variant) -> dict[str, SectionUse]:
        found = self._sections.get(v)
        if found is None:
            found = self._sections[v] = {u.section.fragment: u for u in self.uses(v)}
        return found

    def _record(self, axis: str, value: str):
        """The model or choice behind a built-in axis value (None for extra axes)."""
        if axis == "model":
            return self.spec.model(value)
        if axis == "personality":
            return self.spec.personality(value)
        if axis == "mode":
            return self.spec.mode(value)
        return None

    def display(self, axis: str, value: str) -> str:
        """A value's display name (models and choices have one; extra axes don't)."""
        record = self._record(axis, value)
        return value if record is None else record.display_name

    def description(self, axis: str, value: str) -> str:
        record = self._record(axis, value)
        return "" if record is None else record.description

    def title(self, v: Variant) -> str:
        """A variant's page title: its axis values (safe names) joined by ' · '."""
        return " · ".join(x for _, x in v.values)

    @cached_property
    def token_range(self) -> tuple[int, int]:
        totals = list(self.totals.values()) or [0]
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
