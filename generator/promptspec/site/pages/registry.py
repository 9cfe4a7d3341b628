"""Every page kind of the site, registered in one place.

A page kind is a module in `site/pages/` plus one `PageKind` line in
`PAGE_KINDS` below: its name, what it makes (site path -> Markdown, and
other files such as a data download), what it lists in the nav, and whether
it is there at all for this build.  `site/build.py` makes the pages of every
kind in this order, and `overview_pages` (the nav `promptspec site init`
writes and the plugin starts from) lists the nav of every kind that is always
there, in the same order; a kind that exists only for some inputs
(conversations, history) adds its nav entry when it makes pages.

Variant pages are not a kind here: they are made when read, one at a time
(`build.Pages`), not all at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from ..html.page_parts import axis_title
from ..index import Paths, SiteIndex
from . import axis_pages, explorer_page, fragment_pages, history_pages, lint_page, matrix_page, tool_pages
from . import changes as site_changes

Nav = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Inputs:
    """What page kinds are made from, beyond the SiteIndex: the optional
    sections' data (None: no section) and the explorer's data file, made by
    the caller (build.PageCache keeps it between serve builds)."""

    conformance: Any = None  # site.pages.conformance.Conformance
    history: Any = None  # review.history.compare.History
    history_chart: Sequence[str] = ()
    explorer_data: Callable[[], str] = lambda: ""


@dataclass(frozen=True)
class PageKind:
    """One kind of page.  `pages(idx, inputs)` -> site path -> Markdown;
    `files(idx, inputs)` -> other generated files (path -> text); `nav(paths,
    axes)` -> (title, path) entries for a nav, `axes` being the axes a nav
    lists pages for; `present(idx, inputs)` says whether the kind is in this
    build (False: no pages, no nav entry).  `always`: listed by
    `overview_pages` before any build (a kind that is always present)."""

    name: str
    pages: Callable[[SiteIndex, Inputs], Mapping[str, str]]
    nav: Callable[[Paths, Sequence[str]], Nav] = lambda paths, axes: ()
    files: Callable[[SiteIndex, Inputs], Mapping[str, str]] = lambda idx, inputs: {}
    present: Callable[[SiteIndex, Inputs], bool] = lambda idx, inputs: True
    always: bool = True
    timing: str = "pages"  # the result.timings entry its time counts into


def _axes(idx: SiteIndex, inputs: Inputs) -> dict[str, str]:
    out = {}
    for axis, values in idx.axes:
        out[idx.axis_page(axis)] = axis_pages.axis_index_page(idx, axis)
        for value in values:
            out[idx.axis_page(axis, value)] = axis_pages.axis_value_page(idx, axis, value)
    return out


def _fragments(idx: SiteIndex, inputs: Inputs) -> dict[str, str]:
    out = {idx.fragment_page(): fragment_pages.fragments_index_page(idx)}
    for f in sorted(idx.spec.fragments, key=lambda f: f.name):
        out[idx.fragment_page(f.name)] = fragment_pages.fragment_page(idx, f.name)
    return out


def _tools(idx: SiteIndex, inputs: Inputs) -> dict[str, str]:
    out = {idx.tool_page(): tool_pages.tools_index_page(idx)}
    for t in idx.spec.tools:
        out[idx.tool_page(t.name)] = tool_pages.tool_page(idx, t.name)
    return out


def _conversations(idx: SiteIndex, inputs: Inputs) -> Mapping[str, str]:
    from ...measure.conversation import runs
    from ...measure.counter import TokenCounter
    from . import conversation_pages

    return conversation_pages.pages(idx, runs(idx.spec, idx.result.variants, TokenCounter()))


def _conformance(idx: SiteIndex, inputs: Inputs) -> dict[str, str]:
    from . import conformance as site_conformance

    return {idx.conformance_page: site_conformance.page(idx)}


PAGE_KINDS: tuple[PageKind, ...] = (
    PageKind("matrix", lambda idx, i: {idx.matrix_page: matrix_page.matrix_page(idx)},
             nav=lambda p, axes: (("Matrix", p.matrix_page),)),
    PageKind("explorer", lambda idx, i: {idx.explorer_page: explorer_page.explorer_page(idx)},
             nav=lambda p, axes: (("Explorer", p.explorer_page),),
             files=lambda idx, i: {idx.explorer_data: i.explorer_data()}, timing="explorer"),
    PageKind("axes", _axes, nav=lambda p, axes: tuple((axis_title(a), p.axis_page(a)) for a in axes)),
    PageKind("fragments", _fragments, nav=lambda p, axes: (("Fragments", p.fragment_page()),)),
    PageKind("tools", _tools, nav=lambda p, axes: (("Tools", p.tool_page()),)),
    PageKind("assembly", lambda idx, i: {idx.assembly_page: fragment_pages.assembly_page(idx)},
             nav=lambda p, axes: (("Assembly", p.assembly_page),)),
    PageKind("lint", lambda idx, i: {idx.lint_page: lint_page.lint_page(idx)},
             nav=lambda p, axes: (("Lint", p.lint_page),)),
    PageKind("changes", lambda idx, i: {idx.changes_page: site_changes.changes_page(idx)},
             nav=lambda p, axes: (("Changes", p.changes_page),)),
    PageKind("conversations", _conversations, nav=lambda p, axes: (("Conversations", p.conversation_page()),),
             present=lambda idx, i: bool(idx.spec.conversations), always=False),
    PageKind("conformance", _conformance, present=lambda idx, i: i.conformance is not None, always=False),
    PageKind("history", lambda idx, i: history_pages.pages(idx, i.history, chart_variants=i.history_chart),
             nav=lambda p, axes: (("History", history_pages.timeline_page_path(p)),),
             present=lambda idx, i: i.history is not None, always=False),
)
"""Every page kind, in nav order: a new kind is a module and one line here."""


def overview_nav(paths: Paths, axes: Sequence[str]) -> Nav:
    """The nav entries of the kinds that are always there, in order."""
    return tuple(entry for kind in PAGE_KINDS if kind.always for entry in kind.nav(paths, axes))
