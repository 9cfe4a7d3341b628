"""Result -> the site's pages: a pure mapping of path -> content.

The MkDocs plugin adds these as generated files; `promptspec build --out`
writes them as a plain folder for other site engines.  Nothing here does I/O
except `assets()` (reading package data); out_folder.py writes the folder.

Layout, under `prefix` (default `prompts/`):

    index.md                     the matrix: every variant, tokens, % usable
    explorer/index.md            the variant explorer: any variant, from one data file
    explorer/explorer-data.json  its data (explorer/data.py)
    explorer/totals.json         every variant's total tokens: where each variant page says it ranks
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
import hashlib
import itertools
import time
import zlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..assemble import export
from ..pipeline import Result
from . import explorer
from . import select as site_select
from .html.markup import block, front_matter, h, md_inline
from .index import ASSET_DIR, CSS, JS, LIST_LIMIT, USES_KEPT, Paths, SiteIndex
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

    def __init__(self, made: Mapping[str, str], on_read: Mapping[str, Callable[[], str]] = {},
                 keys: Mapping[str, Callable[[], Any]] = {}) -> None:
        self._made = dict(made)
        self._on_read = dict(on_read)
        self._keys = dict(keys)
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

    def key(self, path: str) -> Any:
        """A small value that is the same in two builds only if the text of
        `path` is: a digest of a text that is held, or what a page made on
        read is made from (PageCache.page_key) -- without making it."""
        key = self._keys.get(path)
        if key is not None:
            return key()
        text = self[path]
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

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
    """Per-variant pages (all but their "changed since base" part), kept
    between builds in one process when `keep` (mkdocs serve); otherwise
    only counted (a build reads each page once or twice and holds none).

    An entry is reused while its variant's Request and Measure are the very
    objects it was made from (the entry holds them, so their ids cannot be
    reused) and the site's layout -- paths, link style, the axes and their
    values, the set of variants and which of them have pages -- is
    unchanged.  Each entry has a serial number, new whenever it is made, so
    that `page_key` and `json_key` can say a page or download is unchanged
    without making it or holding its text (JSON downloads are not kept:
    under serve an unchanged one is not asked for again)."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self._layout: Any = None
        # variant -> (request, measure, (length of the first part, both compressed), serial)
        self._parts: dict[Any, tuple[Any, Any, tuple[int, bytes], int]] = {}
        self._json: dict[Any, tuple[Any, int]] = {}  # variant -> (request, serial)
        self._dynamic: dict[Any, tuple[str, ...]] = {}  # this build's variant.dynamic_parts
        self._explorer: tuple[Any, str] | None = None
        self._comparisons: dict[Any, Any] = {}  # summary.KEPT
        self._others: dict[Any, bytes] = {}  # site_variant.OTHERS_KEPT
        self._uses: dict[Any, Any] = {}  # index.USES_KEPT
        self._serials = itertools.count()
        self.reused = 0
        self.made = 0

    def start(self, idx: SiteIndex) -> None:
        layout = (idx.prefix, idx.links, idx.axes, tuple(idx.variants), idx.pages, idx.diagrams)
        if layout != self._layout:
            self._layout = layout
            self._parts.clear()
            self._json.clear()
            self._comparisons.clear()
            self._others.clear()
        if self.keep:
            idx.memo[summary.KEPT] = self._comparisons
            idx.memo[site_variant.OTHERS_KEPT] = self._others
            # A variant's uses: kept for the variants this build has (an edit reaches a few).
            self._uses = {v: hit for v, hit in self._uses.items() if idx.request.get(v) is hit[0]}
            idx.memo[USES_KEPT] = self._uses
        self._dynamic = {}
        self.reused = self.made = 0

    def _entry(self, idx: SiteIndex, v: Any) -> tuple[tuple[str, str], int]:
        req, m = idx.request[v], idx.measure[v]
        hit = self._parts.get(v)
        if hit is not None and hit[0] is req and hit[1] is m:
            text = zlib.decompress(hit[2][1]).decode("utf-8")
            return (text[:hit[2][0]], text[hit[2][0]:]), hit[3]
        parts, serial = site_variant.static_parts(idx, v), next(self._serials)
        if self.keep:  # compressed: a few KB a variant for a whole serve session
            self._parts[v] = (req, m, (len(parts[0]), zlib.compress("".join(parts).encode("utf-8"), 1)), serial)
        self.made += 1
        return parts, serial

    def parts(self, idx: SiteIndex, v: Any) -> tuple[str, str]:
        made = self.made
        parts = self._entry(idx, v)[0]
        self.reused += self.made == made
        return parts

    def _dynamic_parts(self, idx: SiteIndex, v: Any) -> tuple[str, ...]:
        found = self._dynamic.get(v)
        if found is None:
            found = site_variant.dynamic_parts(idx, v)
            if self.keep:  # page_key, then page: made once a build
                self._dynamic[v] = found
        return found

    def page_key(self, idx: SiteIndex, v: Any) -> tuple[int, bytes]:
        """Equal in two builds only if the variant's page is the same text."""
        req, m = idx.request[v], idx.measure[v]
        hit = self._parts.get(v)
        serial = hit[3] if hit is not None and hit[0] is req and hit[1] is m else self._entry(idx, v)[1]
        dynamic = "\0".join(self._dynamic_parts(idx, v)).encode("utf-8")
        return serial, hashlib.blake2b(dynamic, digest_size=16).digest()

    def page(self, idx: SiteIndex, v: Any) -> str:
        return site_variant.page(idx, v, self.parts(idx, v), self._dynamic_parts(idx, v))

    def json_key(self, req: Any) -> int:
        """Equal in two builds only if the variant's download is the same text."""
        hit = self._json.get(req.variant)
        if hit is not None and hit[0] is req:
            return hit[1]
        serial = next(self._serials)
        if self.keep:
            self._json[req.variant] = (req, serial)
        return serial

    def json(self, req: Any) -> str:
        return export.dumps(export.responses_payload(req))

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
    if paged:
        files[idx.totals_file] = site_variant.totals_json(idx)  # read by the variant pages' place lines
    variant_pages = {idx.variant_page(v): functools.partial(cache.page, idx, v) for v in paged}
    variant_files = {idx.variant_json(v): functools.partial(cache.json, idx.request[v]) for v in paged}
    page_keys = {idx.variant_page(v): functools.partial(cache.page_key, idx, v) for v in paged}
    file_keys = {idx.variant_json(v): functools.partial(cache.json_key, idx.request[v]) for v in paged}
    if progress is not None:
        progress(len(pages), len(pages))
    explorer_s = spent.get("explorer", 0.0)
    result.timings["explorer"] = explorer_s
    result.timings["pages"] = time.perf_counter() - started - explorer_s
    return Site(Pages(pages, variant_pages, page_keys), Pages(files, variant_files, file_keys), nav,
                frozenset(p for _, p in nav), len(paged))


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
