"""The generated pages inside MkDocs: made when read, rendered without parsing
promptspec's own HTML.

MkDocs 1.6 (and ProperDocs, its fork, which runs this module unchanged) has no
hook that says "this page is HTML already", so the fast path of
fast_pages.py rides on the page events every plugin gets:

* `markdown` (on_page_markdown): the page becomes its skeleton.  A skeleton
  rendered before -- same text, same Markdown settings, no links -- is not
  rendered again: the page's `render` is replaced, for this page object
  only, by one that restores the stored result (content, TOC, title,
  anchors).  Every variant page of a site has one of a few skeletons, so a
  build renders a handful, and under `mkdocs serve` (renders kept) an edit,
  which changes blocks, rarely a skeleton, renders none.
* `content` (on_page_content): the blocks go back into the HTML -- or, for a
  page out of the search index (`deferred`: the variant pages), they go back
  in at `post_page`, when MkDocs writes the page, all but the page heading
  (fast_pages.theme_blocks), which the theme looks for.  MkDocs keeps every page's
  content until the last page is written; what a deferred page holds
  meanwhile is its skeleton's HTML and its blocks, raw up to HELD_RAW
  characters for the whole site (HELD_RAW_SERVING under serve) and compressed
  (a few KB a page) past it.
* `env` (on_env, serve only): a deferred page whose skeleton and site are an
  earlier build's gets that build's theme output, placeholders and all, so
  the theme is not rendered again for it (its new blocks still go in); that
  output is kept compressed, a few KB a page, beside digests of the skeleton
  and content it was made from, and unpacked only as the page is written.
* `nav` (served_pages, serve only): a deferred page whose text changed but
  whose skeleton, metadata and content as the theme gets it (its page
  heading, any banner) are an earlier build's, in the last build's site, is
  not handed to MkDocs at all: its page is that theme output with the new
  blocks put in (`rewrite`), written by the plugin.  An edit changes
  blocks, so most variant pages it reaches take this path.
* a placeholder that did not come through (an extension or another plugin
  changed it): in `content` the page is rendered again the normal way; in
  `post_page` a warning names the page and the option that turns the fast
  path off (a strict build stops rather than publish a broken page).

`ProducedFile` is a generated file whose text is made each time MkDocs reads
it, for the pages and downloads a large site cannot hold all at once.
"""

from __future__ import annotations

import hashlib
import logging
import os
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from mkdocs.structure.files import File

from . import fast_pages

log = logging.getLogger("mkdocs.plugins.promptspec")


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class Digests:
    """What each generated file held in the last build and holds in this
    one, so that `mkdocs serve --dirty` skips the files an edit did not change
    (MkDocs asks File.is_modified); and what this plugin left at each
    destination, so that a serve rebuild in place (served_output) does not
    write a file again that already holds its bytes."""

    def __init__(self) -> None:
        self.previous: dict[str, bytes] = {}
        self.current: dict[str, bytes] = {}
        self.on_disk: dict[str, tuple[bytes, int, int, int]] = {}  # path -> (digest, size, inode, mtime)

    def next_build(self) -> None:
        self.previous, self.current = {**self.previous, **self.current}, {}

    def changed(self, uri: str, text: str) -> bool:
        digest = self.current.get(uri)
        return self.note(uri, digest if digest is not None else _digest(text.encode("utf-8")))

    def note(self, uri: str, digest: bytes) -> bool:
        """This build's digest of `uri`; whether it differs from the last build's."""
        self.current[uri] = digest
        return self.previous.get(uri) != digest

    def holds(self, path: str, digest: bytes) -> bool:
        """Whether `path` is still the file this plugin wrote there with
        these bytes (same inode, size and modification time since)."""
        known = self.on_disk.get(path)
        if known is None or known[0] != digest:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        return known == (digest, st.st_size, st.st_ino, st.st_mtime_ns)

    def wrote(self, path: str, digest: bytes) -> None:
        st = os.stat(path)
        self.on_disk[path] = (digest, st.st_size, st.st_ino, st.st_mtime_ns)


class ProducedFile(File):
    """A generated file made by `produce()` whenever MkDocs reads it (its
    `_content`, which File's readers and copy_file all go through).  Setting
    the content -- as a plugin may -- stores that text instead."""

    produce: Callable[[], str] | None = None
    digests: Digests | None = None
    _override: str | bytes | None = None

    @property  # type: ignore[override]
    def _content(self) -> str | bytes | None:
        if self._override is not None or self.produce is None:
            return self._override
        return self.produce()

    @_content.setter
    def _content(self, value: str | bytes | None) -> None:
        self._override = value

    def is_modified(self) -> bool:
        if self.digests is None or self.produce is None or self._override is not None:
            return True
        return self.digests.changed(self.src_uri, self.produce())

    def copy_file(self, dirty: bool = False) -> None:
        """A destination that still holds these bytes, as this plugin wrote
        them, is touched instead of written again: its change time says this
        build wrote it, which is what the sweep of a serve rebuild in place
        keeps (served_output); after MkDocs' clean there is nothing to keep."""
        if self.digests is None or self.produce is None or self._override is not None:
            return super().copy_file(dirty)
        data = self.produce().encode("utf-8")
        digest, path = _digest(data), self.abs_dest_path
        if dirty and not self.digests.note(self.src_uri, digest):  # is_modified, from the bytes made here
            return
        if self.digests.holds(path, digest):
            os.utime(path)
        else:
            # Written over in place, not truncated first: on a disk that
            # discards freed blocks a truncation costs ~40x the write (served_output).
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666), "wb") as out:
                out.write(data)
                out.truncate()
        self.digests.wrote(path, digest)

    @classmethod
    def make(cls, config: Any, src_uri: str, produce: Callable[[], str], digests: Digests | None = None,
             **kwargs: Any) -> "ProducedFile":
        f = cls.generated(config, src_uri, content="", **kwargs)
        f._override = None
        f.produce = produce
        f.digests = digests
        return f


@dataclass(frozen=True)
class _Split:
    """A page's text, skeleton and anchors, while MkDocs renders it (under
    serve a page whose text did not change is not built at all: served_pages)."""

    markdown: str
    skeleton: fast_pages.Skeleton
    anchors: frozenset[str]


@dataclass(frozen=True)
class _Themed:
    """A deferred page as the theme rendered it in an earlier serve build --
    placeholders where its blocks go -- and what that depended on."""

    skeleton: bytes  # digest of its Markdown (what MkDocs reads after the front matter)
    meta: bytes  # digest of its front matter as MkDocs read it (title, search settings)
    content: bytes  # digest of page.content as the theme got it (the skeleton's HTML, any banner)
    site: str  # site_signature() of that build
    output: bytes  # compressed (zlib): a few KB a page, for every page of a serve session


@dataclass(frozen=True)
class Rewrite:
    """A deferred page a serve rebuild makes without MkDocs (FastPages.rewrite):
    an earlier build's theme output with this build's blocks put in."""

    themed: _Themed
    blocks: tuple[str, ...]
    later: tuple[int, ...]  # the blocks that go in after the theme (all but theme_blocks)
    title: str | None  # what the page's render gives as its title (the nav shows it)
    anchors: frozenset[str]

    def output(self, site: str | None) -> str | None:
        """The page's HTML in a site whose signature is `site`; None if that is
        not the site its theme output was made in (MkDocs builds it)."""
        if site is None or site != self.themed.site:
            return None
        return fast_pages.restore(str(_ThemeOutput(self.themed.output)), self.blocks, self.later)


class _ThemeOutput:
    """An earlier build's theme output for one page, unpacked when its template
    prints it: a rebuild that reuses the theme output of hundreds of pages
    then holds one page's unpacked at a time, not all of them until written."""

    __slots__ = ("packed",)

    def __init__(self, packed: bytes) -> None:
        self.packed = packed

    def __str__(self) -> str:
        return zlib.decompress(self.packed).decode("utf-8")

    __html__ = __str__  # printed as it is under autoescape too


THEMED_TEMPLATE = "promptspec-themed.html"
"""A template that prints a page's earlier theme output as it is (from an
attribute of the page, so that plugins reading page.content -- Material's
search strips attributes from it -- see the page's own small content)."""


@dataclass(frozen=True)
class _Rendered:
    """A skeleton's render: the same for every page with that skeleton (no
    links in it), in this build and, under serve, the next ones."""

    content: str
    toc: Any
    title: str | None
    anchors: frozenset[str]
    links_to_anchors: Any


MAX_RENDERS = 4096
"""Distinct skeletons whose render is kept (variant pages share a handful)."""

HELD_RAW = 96_000_000
"""Characters of deferred blocks held as they are before the rest is packed
(zlib): packing costs ~0.3 ms a page, so a site of a few thousand variant
pages holds its blocks raw (some 200 MB at most) and only a larger one
compresses the pages past that."""

HELD_RAW_SERVING = 32_000_000
"""The same budget under `mkdocs serve`, which also holds what it keeps for
the next rebuild (the last result, page parts, theme output): a rebuild of a
few hundred variant pages still holds its blocks raw, a first build or one
that rebuilds most pages packs the rest, so serve's peak stays near a build's."""


class FastPages:
    """The fast path's state: per build, the blocks of the page being
    rendered and of the pages written later; across serve builds (`keep`),
    renders and each deferred page's theme output (compressed)."""

    def __init__(self) -> None:
        self._skeletons: dict[str, tuple[bytes, bytes]] = {}  # this build's deferred pages' (skeleton, meta) digests (env, keep only)
        self.renders: dict[tuple[str, str], _Rendered] = {}  # (settings, skeleton) -> its render
        self.themed: dict[str, _Themed] = {}
        self.start(None, keep=False, deferred=lambda uri: False)

    def start(self, config: Any, *, keep: bool, deferred: Callable[[str], bool]) -> None:
        """A new build: `keep` what can be reused by the next one (serve);
        `deferred(src_uri)`: the page's blocks go back in when it is written."""
        self.keep = keep
        self.deferred = deferred
        self.settings = "" if config is None else repr(
            (config.markdown_extensions, config.mdx_configs, config.use_directory_urls, config.validation)
        )
        self._pending: dict[str, tuple[str, _Split]] = {}
        self._later: dict[str, bytes | tuple[str, ...]] = {}
        self._held = 0  # characters of raw blocks in _later
        self._now: dict[str, frozenset[int]] = {}  # deferred pages' blocks already put back (theme_blocks)
        self._contents: dict[str, bytes] = {}  # digests of deferred pages' content as the theme gets it (env, keep only)
        self._seen: set[str] = set()
        self.site: str | None = None
        self.fast = self.reused = self.whole = 0

    def markdown(self, markdown: str, page: Any) -> str:
        uri = page.file.src_uri
        skeleton = fast_pages.split(markdown)
        split = _Split(markdown, skeleton, frozenset(fast_pages.anchor_ids(skeleton.blocks)))
        if self.keep:  # for env and post_page; forgotten at finish
            self._skeletons[uri] = (_digest(skeleton.markdown.encode("utf-8")), _meta_digest(page.meta))
        if not split.skeleton.blocks:
            return markdown
        self._pending[uri] = (markdown, split)
        self._seen.add(uri)
        body = fast_pages.without_front_matter(split.skeleton.markdown)
        stored = self.renders.get((self.settings, body))
        if stored is not None:
            page.render = lambda config, files: self._restore(page, stored)
        return split.skeleton.markdown

    @staticmethod
    def _restore(page: Any, stored: _Rendered) -> None:
        page.content = stored.content
        # Shared by the pages with this skeleton: MkDocs and the theme only read a TOC.
        page.toc = stored.toc
        page._title_from_render = stored.title
        page.present_anchor_ids = set(stored.anchors)
        if stored.links_to_anchors is not None:
            page.links_to_anchors = stored.links_to_anchors

    def content(self, html: str, page: Any, config: Any, files: Any) -> str:
        uri = page.file.src_uri
        pending = self._pending.pop(uri, None)
        if pending is None:
            return html
        markdown, split = pending
        blocks = split.skeleton.blocks
        if not fast_pages.intact(html, len(blocks)):
            log.info("promptspec: %s: a placeholder was changed during rendering; rendered the normal way", uri)
            page.markdown = markdown
            type(page).render(page, config, files)
            return page.content
        if "render" in vars(page):
            self.reused += 1
            del page.render
        else:
            body = fast_pages.without_front_matter(split.skeleton.markdown)
            if _cacheable(body) and len(self.renders) < MAX_RENDERS:
                # page.content, not `html`: the render's own output, before the
                # plugins ahead of this one in on_page_content changed it.
                self.renders[(self.settings, body)] = _Rendered(
                    page.content, page.toc, page._title_from_render,
                    frozenset(page.present_anchor_ids or ()), page.links_to_anchors,
                )
        self.fast += 1
        page.present_anchor_ids = set(page.present_anchor_ids or ()) | split.anchors
        if self.deferred(uri):
            now = fast_pages.theme_blocks(blocks)
            html = fast_pages.fill(html, blocks, now)
            self._now[uri] = now
            # Held raw up to HELD_RAW (serving: HELD_RAW_SERVING) characters, then packed.
            size = sum(map(len, blocks))
            if self._held + size <= (HELD_RAW_SERVING if self.keep else HELD_RAW):
                self._later[uri] = blocks
                self._held += size
            else:
                self._later[uri] = fast_pages.pack(blocks)
            return html
        return fast_pages.fill(html, blocks, range(len(blocks)))  # intact: checked above

    def env(self, env: Any, files: Any, site: str | None) -> Any:
        """Every page is rendered; the theme is next.  The theme sees a
        deferred page's skeleton only (its blocks go in at post_page), so
        under serve a page whose skeleton and site (`site`: site_signature;
        None: no reuse) are those of an earlier build gets that build's theme
        output through THEMED_TEMPLATE, whatever its blocks now hold: the
        theme is not rendered again for it."""
        self.site = site
        if not self.keep or site is None:
            return env
        import jinja2

        env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({THEMED_TEMPLATE: "{{ page.promptspec_themed }}"}), env.loader])
        for uri in self._later:  # the deferred pages this build rendered
            file = files.get_file_from_path(uri)
            if file is None or file.page is None or file.page.content is None:
                continue
            skeleton, meta = self._skeletons[uri]
            content = _digest(file.page.content.encode("utf-8"))
            self._contents[uri] = content
            t = self.themed.get(uri)
            if t is None or (t.skeleton, t.meta, t.content, t.site) != (skeleton, meta, content, site):
                continue
            file.page.meta["template"] = THEMED_TEMPLATE
            file.page.promptspec_themed = _ThemeOutput(t.output)
            self.whole += 1
        return env

    def rewrite_file(self, file: Any, banners: str) -> tuple[Any, Rewrite] | None:
        """`rewrite` of a generated page's file as MkDocs would read it: (its
        metadata, how) or None (a page MkDocs fails to read says why itself)."""
        from mkdocs.utils import meta as front_matter

        try:
            markdown, meta = front_matter.get_data(file.content_string)
        except Exception:  # noqa: BLE001
            return None
        remade = self.rewrite(file.src_uri, markdown, meta, banners)
        return None if remade is None else (meta, remade)

    def rewrite(self, uri: str, markdown: str, meta: Any, banners: str) -> Rewrite | None:
        """A deferred page (`markdown` and `meta` as MkDocs reads them) whose
        skeleton, metadata and content as the theme would get it (`banners`
        ahead of the skeleton's HTML with its theme blocks in) are those of
        its theme output from an earlier serve build: what makes its page
        without MkDocs (served_pages); None: MkDocs builds it.  The same
        checks as `env`'s reuse, made before MkDocs reads the page."""
        t = self.themed.get(uri)
        if t is None or not self.keep or not self.deferred(uri):
            return None
        skeleton = fast_pages.split(markdown)
        blocks = skeleton.blocks
        if not blocks or (_digest(skeleton.markdown.encode("utf-8")), _meta_digest(meta)) != (t.skeleton, t.meta):
            return None
        stored = self.renders.get((self.settings, fast_pages.without_front_matter(skeleton.markdown)))
        if stored is None or not fast_pages.intact(stored.content, len(blocks)):
            return None
        now = fast_pages.theme_blocks(blocks)
        if _digest((banners + fast_pages.fill(stored.content, blocks, now)).encode("utf-8")) != t.content:
            return None
        return Rewrite(t, blocks, tuple(n for n in range(len(blocks)) if n not in now), stored.title,
                       stored.anchors | fast_pages.anchor_ids(blocks))

    def post_page(self, output: str, page: Any) -> str:
        uri = page.file.src_uri
        later = self._later.pop(uri, None)
        if later is None:
            return output
        if self.site is not None and uri in self._contents:
            self.themed[uri] = _Themed(*self._skeletons[uri], self._contents.pop(uri), self.site,
                                       zlib.compress(output.encode("utf-8"), 1))
        blocks = later if isinstance(later, tuple) else fast_pages.unpack(later)
        now = self._now.pop(uri, frozenset())
        restored = fast_pages.restore(output, blocks, [n for n in range(len(blocks)) if n not in now])
        if restored is None:
            log.warning(
                "promptspec: %s: the page's HTML lost a placeholder after rendering (a plugin after Markdown "
                "changed or repeated it); set the promptspec plugin's option 'fast_pages: false'", page.file.src_uri,
            )
            return output
        return restored

    def finish(self, kept: Iterable[str] = ()) -> None:
        """Forget this build's pages, and the theme output of pages the site
        no longer has (`kept`: pages left out of this build as they were)."""
        if not self.keep:
            self.renders = {}
        self._skeletons = {}
        self._contents = {}
        seen = self._seen.union(kept)
        self.themed = {uri: t for uri, t in self.themed.items() if uri in seen}


def site_signature(config: Any, nav: Any) -> str:
    """What a page's HTML depends on besides the page: the configuration
    (all of it but the plugin objects), the nav as rendered (titles, URLs) and
    the theme's templates (their sizes and times)."""
    h = hashlib.blake2b(digest_size=16)
    for key in sorted(config.keys()):
        if key != "plugins":
            h.update(f"{key}={config[key]!r}\n".encode("utf-8", "replace"))
    h.update(repr(list(config.plugins)).encode("utf-8"))

    def walk(items: Any) -> None:
        for item in items or ():
            h.update(f"{type(item).__name__}|{item.title}|{getattr(item, 'url', '')}\n".encode("utf-8", "replace"))
            walk(getattr(item, "children", None))

    walk(getattr(nav, "items", None))
    for folder in config.theme.dirs:
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))  # .icons: thousands of SVGs, no templates
            for name in sorted(names):
                if name.endswith(".html"):
                    st = os.stat(os.path.join(root, name))
                    h.update(f"{root}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode("utf-8", "replace"))
    return h.hexdigest()


def _cacheable(body: str) -> bool:
    """A skeleton whose render depends on nothing but its text: no Markdown
    link or image, which MkDocs resolves against the page's place and the
    site's files (spec text in headings has its brackets escaped: markup.md_inline)."""
    return "[" not in body and "<http" not in body


def _meta_digest(meta: Any) -> bytes:
    """A page's front matter as MkDocs read it (YAML: plain dicts, lists and
    scalars, whose repr is their content), as a digest."""
    return _digest(repr(meta).encode("utf-8", "replace"))
