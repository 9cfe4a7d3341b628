"""A serve rebuild hands MkDocs only the generated files an edit changed.

After an edit under `mkdocs serve`, most generated pages and downloads are
what the last build made of them: same text (build.Pages.key says so
without making it), same site around them (mkdocs_pages.site_signature:
config, nav, theme), same banners.  MkDocs would still read, render, theme,
index and write every one of them -- at 2,400 variants, most of a reload.
So such a file stays in MkDocs' Files (links to it resolve, the nav and the
sitemap list it) but is left out of what MkDocs builds and copies
(`ServedFiles`), its page keeps the title, metadata and anchors the last
build gave it (other pages' nav and link checks read them), its output in
the served site -- still the bytes that build wrote, checked by size, inode
and time -- is kept through the sweep of the rebuild in place
(served_output), and its search entries, kept from the build that indexed
it, go back into the search index in page order.

A generated page whose text did change is left out too when the plugin can
make it without MkDocs: a variant page whose skeleton, metadata and content
as the theme gets it are what an earlier build themed, in the last build's
site (mkdocs_pages.Rewrite: that theme output with the new blocks put in).
An edit changes blocks, not skeletons, so most of the pages it reaches are
written that way, in `on_nav`, one at a time (nothing of them is held); its
title, metadata and search entries are the last build's as for a page left
as it was; its anchors are its new blocks'.

The decision is made twice: in `on_nav` from what is known before any page
is read (the keys, the banners; for a page to rewrite, its new text), and in
`on_env`, once every other page is
read, from the site signature, which must be the last build's; if the site
changed, the left-out pages are read and rendered after all and the build
goes on as a full one (MkDocs writes the rewritten pages again).  Used only where
reusing a page whole is safe (the plugin's _reuse_is_safe: no other plugin
changes pages, the only other page_context handler is Material's search),
with the fast path on and the served site rebuilt in place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Protocol, Sequence

from mkdocs.structure.files import File, Files, InclusionLevel


class ServedFiles(Files):
    """MkDocs' Files with some of them left out of what a build reads,
    renders, writes and copies (`skip`), while every lookup still finds them."""

    def __init__(self, files: Iterable[File]) -> None:
        super().__init__(files)
        self.skip: set[str] = set()

    def documentation_pages(self, *, inclusion: Callable[[InclusionLevel], bool] = InclusionLevel.is_included) -> Sequence[File]:
        pages = super().documentation_pages(inclusion=inclusion)
        return [f for f in pages if f.src_uri not in self.skip] if self.skip else pages

    def copy_static_files(self, dirty: bool = False, *,
                          inclusion: Callable[[InclusionLevel], bool] = InclusionLevel.is_included) -> None:
        for file in self:
            if not file.is_documentation_page() and inclusion(file.inclusion) and file.src_uri not in self.skip:
                file.copy_file(dirty)


@dataclass(frozen=True)
class _Made:
    """What a build left of one generated file: enough to leave it out of the next."""

    key: Any  # build.Pages.key
    stat: tuple[int, int, int]  # its output's size, inode, mtime
    title: str | None = None  # a page's: what other pages' nav shows
    meta: Any = None
    anchors: frozenset[str] | None = None
    search: tuple[Any, ...] = ()  # its entries in the search index


class Remade(Protocol):
    """A changed page made without MkDocs (mkdocs_pages.Rewrite)."""

    title: str | None
    anchors: frozenset[str]

    def output(self, site: Any) -> str | None: ...


def _stat(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_ino, st.st_mtime_ns


class Unchanged:
    """The record across serve builds, and this build's decision."""

    def __init__(self) -> None:
        self.made: dict[str, _Made] = {}
        self.built_in: Any = None  # (banners, site signature) of the build that made self.made
        self.keys: dict[str, Any] = {}  # this build's generated files -> key
        self.left_out: dict[str, File] = {}
        self.files: ServedFiles | None = None
        self.banners: Any = None
        self.site: Any = None
        self._marks: list[tuple[str, int]] = []  # (page, index of its first search entry)
        self.rewrote: set[str] = set()  # left-out pages this build made itself (rewrite)
        self.kept = 0  # left out as they were (not rewritten)

    def start(self, files: ServedFiles | None, keys: dict[str, Any], banners: Any) -> None:
        """on_files: this build's generated files (None: leave nothing out)."""
        self.files, self.keys, self.banners = files, keys, banners
        self.left_out, self._marks, self.site, self.rewrote, self.kept = {}, [], None, set(), 0

    def leave_out(self, rewrite: Callable[[File], tuple[Any, Remade] | None] | None = None,
                  write: Callable[[File, str], None] | None = None) -> None:
        """on_nav: leave out every generated file whose key and output are the
        last build's, with the same banners, and write every changed page
        `rewrite` can make ((its metadata, how) or None) in the last build's
        site (`write`); give each page what that build gave it."""
        if self.files is None or self.built_in is None or self.built_in[0] != self.banners:
            return
        for uri, key in self.keys.items():
            made = self.made.get(uri)
            file = self.files.get_file_from_path(uri)
            if made is None or file is None:
                continue
            meta, title, anchors = made.meta, made.title, made.anchors
            if made.key != key or _stat(file.abs_dest_path) != made.stat:
                if rewrite is None or write is None or made.key == key or file.page is None:
                    continue
                remade = rewrite(file)
                output = None if remade is None else remade[1].output(self.built_in[1])
                if remade is None or output is None:
                    continue
                write(file, output)
                meta, title, anchors = remade[0], remade[1].title, remade[1].anchors
                self.rewrote.add(uri)
            if file.is_documentation_page():
                page = file.page
                if page is None:
                    continue
                page.markdown, page.content = "", ""  # read and rendered, as far as its title goes
                page.meta = meta
                page._title_from_render = title
                page.present_anchor_ids = set(anchors or ())
            self.left_out[uri] = file
        self.files.skip = set(self.left_out)

    def confirm(self, site: Any, populate: Callable[[Any], None]) -> None:
        """on_env: the site signature (None: unknown) must be the one the
        left-out files were made in; if not, their pages are read and
        rendered after all (the rewritten ones too: MkDocs writes them
        again), and their files copied."""
        self.site = site
        if self.left_out and (site is None or self.built_in != (self.banners, site)):
            self.files.skip = set()  # type: ignore[union-attr]
            for file in self.left_out.values():
                if file.is_documentation_page():
                    file.page.markdown = file.page.content = None
                    populate(file.page)
            self.left_out, self.rewrote = {}, set()
        self.kept = len(self.left_out) - len(self.rewrote)

    @property
    def rewritten(self) -> int:
        return len(self.rewrote)

    def mark(self, page: Any, entries: Sequence[Any] | None) -> None:
        """on_page_context, before the search index sees the page."""
        if entries is not None:
            self._marks.append((page.file.src_uri, len(entries)))

    def finish(self, entries: list[Any] | None, order: Sequence[File]) -> list[str]:
        """on_post_build, before the search index is written: the left-out
        pages' entries back in page order, a record of every generated file
        this build made; the paths of the left-out outputs (to keep)."""
        searched: dict[str, tuple[Any, ...]] = {}
        if entries is not None:
            ends = [n for _, n in self._marks[1:]] + [len(entries)]
            searched = {uri: tuple(entries[start:end]) for (uri, start), end in zip(self._marks, ends)}
            if self.left_out:
                spliced: list[Any] = []
                for file in order:
                    uri = file.src_uri
                    spliced.extend(self.made[uri].search if uri in self.left_out else searched.get(uri, ()))
                entries[:] = spliced
        made: dict[str, _Made] = {}
        for uri, key in self.keys.items() if self.files is not None and self.site is not None else ():
            if uri in self.rewrote:
                page = self.left_out[uri].page
                made[uri] = replace(self.made[uri], key=key, stat=_stat(self.left_out[uri].abs_dest_path),
                                    meta=page.meta, title=page._title_from_render,
                                    anchors=frozenset(page.present_anchor_ids or ()))
                continue
            if uri in self.left_out:
                made[uri] = self.made[uri]
                continue
            file = self.files.get_file_from_path(uri)
            stat = None if file is None else _stat(file.abs_dest_path)
            if stat is None:
                continue
            page = file.page if file.is_documentation_page() else None
            if page is None and file.is_documentation_page():
                continue
            if page is not None and page.content is None:
                continue  # not built
            made[uri] = _Made(key, stat) if page is None else _Made(
                key, stat, page._title_from_render, page.meta, frozenset(page.present_anchor_ids or ()),
                searched.get(uri, ()) if entries is not None else (),
            )
        self.made = made
        self.built_in = (self.banners, self.site) if made else None
        return [f.abs_dest_path for f in self.left_out.values()]


def pages_read_by_one(plugin: Any, config: Any) -> bool:
    """No plugin but `plugin` reads or changes a page's source, Markdown or
    HTML (read_source, pre_page, page_markdown, page_content): a page it
    makes itself is then what MkDocs would make of it."""
    events = ("page_read_source", "pre_page", "page_markdown", "page_content")
    return all(getattr(handler, "__self__", None) is plugin for event in events
               for handler in config.plugins.events.get(event, []))


def write_page(file: File, output: str, trash: Any = None) -> None:
    """A page made without MkDocs, written as MkDocs writes a page (over a
    file moved to `trash`, served_output.Trash, when the site is rebuilt in place)."""
    from mkdocs import utils

    if trash is not None:
        trash.move(file.abs_dest_path)
    if output.strip():
        utils.write_file(output.encode("utf-8", errors="xmlcharrefreplace"), file.abs_dest_path)
