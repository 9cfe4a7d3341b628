"""Result -> the site's pages: a pure mapping of path -> content.

The MkDocs plugin adds these as generated files; `promptspec build --out`
writes them as a plain folder for other site engines.  Nothing here does I/O
except `assets()` (reading package data); out_folder.py writes the folder.

Layout, under `prefix` (default `prompts/`):

    index.md                     the matrix: every variant, tokens, % usable
    explorer/index.md            the variant explorer: any variant, from one data file
    explorer/explorer-data.json  its data (explorer/data.py)
    variants/<slug>.md|.json     one page per variant + its Responses-API JSON
                                 (all, none or some: the `variant_pages` option)
    models/ personalities/ modes/ axes/<axis>/   index.md + one page per value
    fragments/index.md, fragments/<name>.md      the fragment catalog
    tools/index.md, tools/<name>.md              the tool catalog (tool_pages.py)
    conversations/index.md, conversations/<name>.md  every request of each conversation (conversation_pages.py)
    assembly.md                  the layout diagram
    lint.md                      every lint finding (fragment pages show their own)
    changes.md                   what changed since the base (changes.py)
    ../assets/promptspec/        CSS and JS the pages and the explorer use

A variant's page and JSON download are made when they are read, not by
`build_site` (`Pages`): MkDocs reads one page at a time, so a site of
10,000 variant pages never holds them all.  `PageCache` keeps the
per-variant parts between builds of one process (`mkdocs serve`): a page is
made again only when its variant's Request or Measure is a new object,
which pipeline.Session guarantees only for the variants an edit can change.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..assemble import export
from ..pipeline import Result
from . import explorer
from . import select as site_select
from .html.markup import block, front_matter, h, md_inline
from .index import ASSET_DIR, CSS, JS, LIST_LIMIT, Paths, SiteIndex
from .pages import changes as site_changes
from .pages import lint_page as site_lint
from .pages import summary
from .pages import variant as site_variant
from .pages import registry
from .pages.registry import Inputs

NAV_AXES = ("model", "personality", "mode")
"""The axes a nav lists pages for (other axes' pages are reached by links)."""

MARKER_FILE = ".promptspec-build"
"""Written into `build --out` folders, so a rebuild only ever replaces its own output."""


class Pages(Mapping[str, str]):
    """Path -> text, in path order.  Some entries are made on every read
    (`made_on_read`) and held by nobody: the variant pages and downloads,
    which a large site could not hold all at once."""

    def __init__(self, made: Mapping[str, str], on_read: Mapping[str, Callable[[], str]] = {}) -> None:
        self._made = dict(made)
        self._on_read = dict(on_read)
        self._order = sorted({*self._made, *self._on_read})

    def __getitem__(self, path: str) -> str:
        text = self._made.get(path)
        return text if text is not None else self._on_read[path]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, path: object) -> bool:
        return path in self._made or path in self._on_read

    def made_on_read(self, path: str) -> bool:
        return path in self._on_read

    def reader(self, path: str) -> Callable[[], str]:
        """What makes the text of `path`, to be called when it is needed."""
        return self._on_read.get(path) or functools.partial(self._made.__getitem__, path)

    def __repr__(self) -> str:
        return f"Pages({len(self._made)} made, {len(self._on_read)} made on read)"


@dataclass(frozen=True)
class Site:
    pages: Pages  # Markdown pages (src path -> text)
    files: Pages  # other generated files (JSON downloads)
    nav: tuple[tuple[str, str], ...]  # overview pages: (title, src path)
    in_nav: frozenset[str] = field(default_factory=frozenset)  # pages that belong in a nav
    variant_page_count: int = 0  # how many variants have a page of their own


class PageCache:
    """Per-variant pages (all but their "changed since base" part) and JSON
    downloads, kept between builds in one process when `keep` (mkdocs
    serve); otherwise only counted (a build reads each page once or twice
    and holds none).

    An entry is reused while its variant's Request and Measure are the very
    objects it was made from (the entry holds them, so their ids cannot be
    reused) and the site's layout -- paths, link style, the set of variants
    and which of them have pages -- is unchanged."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self._layout: Any = None
        self._parts: dict[Any, tuple[Any, Any, tuple[str, str]]] = {}
        self._json: dict[Any, tuple[Any, str]] = {}
        self._explorer: tuple[Any, str] | None = None
        self._comparisons: dict[Any, Any] = {}  # summary.KEPT
        self.reused = 0
        self.made = 0

    def start(self, idx: SiteIndex) -> None:
        layout = (idx.prefix, idx.links, tuple(idx.variants), idx.pages, idx.diagrams)
        if layout != self._layout:
            self._layout = layout
            self._parts.clear()
            self._json.clear()
            self._comparisons.clear()
        if self.keep:
            idx.memo[summary.KEPT] = self._comparisons
        self.reused = self.made = 0

    def parts(self, idx: SiteIndex, v: Any) -> tuple[str, str]:
        req, m = idx.request[v], idx.measure[v]
        hit = self._parts.get(v)
        if hit is not None and hit[0] is req and hit[1] is m:
            self.reused += 1
            return hit[2]
        parts = site_variant.static_parts(idx, v)
        if self.keep:
            self._parts[v] = (req, m, parts)
        self.made += 1
        return parts

    def json(self, req: Any) -> str:
        hit = self._json.get(req.variant)
        if hit is not None and hit[0] is req:
            return hit[1]
        text = export.dumps(export.responses_payload(req))
        if self.keep:
            self._json[req.variant] = (req, text)
        return text

    def page(self, idx: SiteIndex, v: Any) -> str:
        return site_variant.page(idx, v, self.parts(idx, v))

    def explorer_data(self, result: Result) -> str:
        if self._explorer is not None and self._explorer[0] is result:
            return self._explorer[1]
        text = explorer.data_bytes(result).decode("utf-8")
        self._explorer = (result, text)
        return text


def build_site(
    result: Result,
    *,
    prefix: str = "prompts",
    links: str = "md",
    findings: Sequence[Any] | None = None,
    changes: site_changes.Changes | None = None,
    rules_page: str | None = None,
    variant_pages: Any = "auto",
    list_limit: int = LIST_LIMIT,
    cache: PageCache | None = None,
    progress: Callable[[int, int], None] | None = None,
    diagrams: str = "html",
    conformance: Any = None,
    history: Any = None,
    history_chart: Sequence[str] = (),
) -> Site:
    """Every page of the site, in a deterministic order.

    `findings`: lint findings of `result` (None: run lint here, timed into
    result.timings); `changes`: the comparison with the base (base.py;
    None: no base); `rules_page`: site path of the lint rules reference, if
    the site has one (rule IDs then link to it); `variant_pages`: which
    variants get a page (site_select: auto, all, none, a filter mapping or a
    parsed VariantPages); `list_limit`: overview pages summarise above this
    many variants (index.LIST_LIMIT); `diagrams`: "html" (drawn by
    promptspec, offline) or "mermaid" (index.DIAGRAMS); `cache`: a PageCache kept between
    builds (default: one that keeps nothing); `progress(done, total)`: called
    as the overview pages are made (variant pages are made when read: Pages); `history`: a
    review.history.History for the History section (None: no section), whose
    timeline follows the variants `history_chart` names.  Adds
    result.timings["explorer"] (its data) and ["pages"] (everything else)."""
    if findings is None:
        findings = site_lint.run(result)
    started = time.perf_counter()
    option = variant_pages if isinstance(variant_pages, site_select.VariantPages) else site_select.parse(variant_pages)
    selected = site_select.select(option, result.variants, result.spec.axes)
    idx = SiteIndex(result, prefix=prefix, links=links, findings=findings, rules_page=rules_page, changes=changes,
                    pages=selected, list_limit=list_limit, diagrams=diagrams, conformance=conformance)
    cache = cache if cache is not None else PageCache(keep=False)
    cache.start(idx)
    paged = [v for v in idx.variants if idx.has_page(v)]
    inputs = Inputs(conformance=conformance, history=history, history_chart=history_chart,
                    explorer_data=functools.partial(cache.explorer_data, result))
    pages: dict[str, str] = {}
    files: dict[str, str] = {}
    nav: tuple[tuple[str, str], ...] = ()
    spent: dict[str, float] = {}
    for kind in registry.PAGE_KINDS:
        if not kind.present(idx, inputs):
            continue
        t = time.perf_counter()
        pages.update(kind.pages(idx, inputs))
        files.update(kind.files(idx, inputs))
        nav += kind.nav(idx, NAV_AXES)
        spent[kind.timing] = spent.get(kind.timing, 0.0) + time.perf_counter() - t
    variant_pages = {idx.variant_page(v): functools.partial(cache.page, idx, v) for v in paged}
    variant_files = {idx.variant_json(v): functools.partial(cache.json, idx.request[v]) for v in paged}
    if progress is not None:
        progress(len(pages), len(pages))
    explorer_s = spent.get("explorer", 0.0)
    result.timings["explorer"] = explorer_s
    result.timings["pages"] = time.perf_counter() - started - explorer_s
    return Site(Pages(pages, variant_pages), Pages(files, variant_files), nav, frozenset(p for _, p in nav), len(paged))


def overview_pages(prefix: str = "prompts", extra_axes: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """The overview pages (title, path) a nav lists; every other page is
    reached by links.  The kinds that are always there, in registry order
    (pages/registry.py)."""
    return registry.overview_nav(Paths(prefix), (*NAV_AXES, *extra_axes))


def assets() -> dict[str, bytes]:
    """The CSS/JS the pages use, by site path."""
    root = resources.files("promptspec.site") / "assets"
    names = (Path(CSS).name, Path(JS).name, *explorer.ASSETS)
    return {f"{ASSET_DIR}/{name}": (root / name).read_bytes() for name in names}


def error_page(title: str, message: str) -> str:
    """A stand-in page shown by `mkdocs serve` when the spec has never built."""
    return (
        front_matter({"title": title})
        + f"# {md_inline(title)}\n\n"
        + block(f"<p>The spec could not be built:</p>\n<pre><code>{h(message)}</code></pre>", cls="ps-error admonition failure")
        + "\n"
    )
