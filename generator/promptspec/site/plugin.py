"""The MkDocs plugin: generate the prompt pages inside `mkdocs build/serve`.

The pages are added as generated files (nothing is written into docs/), so
the spec stays the single source.  A spec error stops `mkdocs build` with the
same one line the CLI prints; under `mkdocs serve` the last good pages stay
up, the error goes to the terminal and onto every page, and fixing the spec
(which is watched) rebuilds and reloads.

    plugins:
      - search
      - promptspec:
          spec: templates            # spec folder, relative to mkdocs.yml
          path: prompts              # folder of the generated pages
          diagrams: auto             # html (drawn by promptspec, offline, dark mode) | mermaid
                                     # (Mermaid text; loaded from a CDN unless mermaid_js is set)
                                     # | auto (mermaid when mermaid_js is set, else html)
          mermaid_js: null           # a local mermaid.min.js, for sites that want Mermaid offline
          cache_dir: null            # token cache (default: the user cache folder, e.g. ~/.cache/promptspec)
          base: lock                 # Changes page: lock | none | a git revision | a spec folder
          lint_rules: guide/lint-rules.md   # docs page that lint rule IDs link to (if it exists)
          variant_pages: auto        # a page per variant: auto (all up to 1,000 variants, else none),
                                     # all, none, or a filter such as {mode: plan} (select.py)
          list_limit: 200            # overview pages summarise above this many variants
          history: null              # releases in order, for a History section (history_pages.py):
                                     # [v1.0, {side: v1.1, label: "1.1", date: 2026-10-02}, dir:old, lock:a.json]
          history_chart: []          # variant ids the timeline follows (default: one per model)
          fast_pages: true           # generated pages skip Markdown's parse of their raw HTML
                                     # (same output; false: the normal path, mkdocs_pages.py)
          native_watch: true         # serve: the spec by change notification (false: MkDocs' 0.5 s poll)

Every variant is always in the explorer page (prompts/explorer/); a variant
without a page of its own is linked to the explorer's deep link instead.

Variant pages and their JSON downloads are made when MkDocs reads them
(mkdocs_pages.ProducedFile), and a variant page's HTML is put together when
MkDocs writes it (fast_pages), so the build holds no page whole for long.
Variant pages are out of the search index (front matter `search: exclude`):
their prompt text is found through the explorer's text search.

Under `mkdocs serve` the plugin keeps a pipeline.Session, a site.PageCache
and mkdocs_pages.FastPages: an edit re-assembles only the variants it can
change and regenerates only their pages, and neither Markdown nor the theme
runs again for a variant page whose skeleton is unchanged (its new HTML goes
into the theme output of the last build); the temp site is rebuilt in place
(served_output), not emptied first.  `mkdocs serve --dirty` rebuilds
only the generated files whose content changed.  Each build logs one line of stage timings on
the `mkdocs.plugins.promptspec` logger; under `mkdocs build` on a terminal
(and not in CI) a progress bar with counts is drawn on stderr.

Hand-written pages get their `<!-- promptspec:example ... -->` markers
expanded from the spec (examples.py).  A bad marker stops `mkdocs build`;
under `mkdocs serve` it is reported and the page keeps the marker, with a
banner.  A base that cannot be loaded (base.py) does the same: build
error, or under serve a banner while the pages show the spec as it is.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from pathlib import Path

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.base import ValidationError
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

from ..errors import PromptspecError
from . import select as site_select
from .index import ASSET_DIR, CSS, JS, LIST_LIMIT, Paths
from .serve import search_input
from .html.markup import h

# Spec errors under `mkdocs serve` go to the terminal through a logger of our
# own: an ERROR on MkDocs' logger would count as a build error in strict mode
# and abort the rebuild, taking the last good pages down with it.
serve_log = logging.getLogger("promptspec.serve")
log = logging.getLogger("mkdocs.plugins.promptspec")


def _report(message: str) -> None:
    if not serve_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)-8s-  %(message)s"))
        serve_log.addHandler(handler)
        serve_log.propagate = False
    serve_log.error(message)

MERMAID_JS = f"{ASSET_DIR}/mermaid.min.js"
_ROOTED = re.compile(r'\b(href|src)="/(?!/)([^"]*)"')
"""A link from the server's root (not a protocol-relative //host link)."""


class _VariantPages(c.BaseConfigOption):
    """auto | all | none | {axis: value(s) or glob(s)} -> site_select.VariantPages."""

    def __init__(self) -> None:
        super().__init__()
        self.default = "auto"

    def run_validation(self, value: object) -> site_select.VariantPages:
        try:
            return site_select.parse(value, where="variant_pages")
        except PromptspecError as exc:
            raise ValidationError(exc.oneline()) from None


class PromptspecConfig(base.Config):
    spec = c.Type(str, default="templates")
    path = c.Type(str, default="prompts")
    diagrams = c.Choice(("auto", "html", "mermaid"), default="auto")
    mermaid_js = c.Optional(c.File(exists=True))
    cache_dir = c.Optional(c.Type(str))
    base = c.Type(str, default="lock")
    lint_rules = c.Type(str, default="guide/lint-rules.md")
    variant_pages = _VariantPages()
    list_limit = c.Type(int, default=LIST_LIMIT)
    conformance = c.Optional(c.Type(str))  # a stored `promptspec verify --out` report
    history = c.Optional(c.Type(list))
    history_chart = c.Type(list, default=[])
    fast_pages = c.Type(bool, default=True)
    native_watch = c.Type(bool, default=True)


class PromptspecPlugin(BasePlugin[PromptspecConfig]):
    """Kept across `mkdocs serve` rebuilds (it has on_startup), which is what
    lets it keep the last good pages while the spec is broken."""

    def __init__(self) -> None:
        from .serve.compiled_templates import PROCESS
        from .serve.idle_collect import IdleCollector
        from .serve.mkdocs_pages import Digests, FastPages
        from .serve.native_watch import NativeWatch
        from .serve.served_pages import Unchanged
        self.serving = False
        self.last_site = None
        self.error: str | None = None
        self.spec_dir: Path | None = None
        self.watch_dirs: list[Path] = []
        self.result = None  # the last good pipeline Result (for examples in hand-written pages)
        self.base_error: str | None = None
        self.page_errors: dict[str, str] = {}
        self.bases = None
        self.session = None  # pipeline.Session, kept across serve rebuilds
        self.session_key = None
        self.cache = None  # site.PageCache, likewise
        self.series = None  # review.series.SeriesCache: history releases, likewise
        self.prebuilt = None  # the Result of on_pre_build, used by on_files
        self.preloaded = None  # on_pre_build's (changes, history, conformance), used by on_files
        self.generated = None  # site.build.Pages of the current build
        self.summary = None  # the build's log line, written once the pages are read (on_env)
        self.fast = FastPages()  # splits, renders and written pages kept across serve rebuilds
        self.digests = Digests()  # what each generated file held and where: `serve --dirty`, serve in place
        self.nav = None
        self.dirty = False
        self.aside = None  # served_output.SetAside: the served site's folders while MkDocs cleans
        self.trash = None  # served_output.Trash: files a serve rebuild writes again, moved out of its way
        self.templates = PROCESS  # the theme's compiled templates, kept across this process's builds and rebuilds
        self.unchanged = Unchanged()  # serve: the generated files an edit left as they were (served_pages)
        self.shown: tuple | None = None  # (page, its content) while the search index reads the page emptied
        self.collector = IdleCollector()  # serve: the cyclic GC waits for the end of each rebuild
        self.watcher = NativeWatch()  # serve: the spec's folders by the system's change notifications

    # -- lifecycle ------------------------------------------------------------
    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"
        self.dirty = dirty

    def on_config(self, config):
        if self.serving and self.last_site is not None:  # a rebuild (the first event of each); resumed at its end
            self.collector.pause()
        base_dir = Path(config.config_file_path).resolve().parent if config.config_file_path else Path.cwd()
        self.base_dir = base_dir
        self.spec_dir = (base_dir / self.config.spec).resolve()
        docs = Path(config.docs_dir).resolve()
        self.docs_label = Path(os.path.relpath(docs, base_dir)).as_posix() if base_dir in docs.parents else docs.as_posix()
        try:
            self.prefix = Paths(self.config.path).prefix
        except PromptspecError as exc:
            raise PluginError(f"promptspec: error: option 'path': {exc.oneline()}") from None
        self.cache_dir = (base_dir / self.config.cache_dir).resolve() if self.config.cache_dir else None
        if self.config.list_limit < 1:
            raise PluginError(f"promptspec: error: option 'list_limit' must be at least 1, found {self.config.list_limit}")
        if self.config.mermaid_js:
            # Before Material's check for a global `mermaid`, which would
            # otherwise fetch it from a CDN.
            config.extra_javascript.insert(0, MERMAID_JS)
        self.diagrams = self.config.diagrams
        if self.diagrams == "auto":
            self.diagrams = "mermaid" if self.config.mermaid_js else "html"
        config.extra_css.append(CSS)
        config.extra_javascript.append(JS)
        return config

    def on_shutdown(self) -> None:
        self.collector.close()
        self.watcher.stop()

    def on_serve(self, server, *, config, builder):
        folders = [f for f in [self.spec_dir, *self.watch_dirs] if f is not None and f.exists()]
        self.watcher.watch(server, folders, self.config.native_watch, config.watch)
        return server

    def on_pre_build(self, *, config) -> None:
        """Load, assemble and count the spec before MkDocs cleans site_dir:
        a broken spec must fail `mkdocs build` with the previous site still
        in place (a deploy script that ignores the exit status would publish
        an empty site).  The Session keeps the result, so on_files redoes nothing.
        Under serve: the served site's folders are set aside from MkDocs'
        clean, to be written over in place (served_output)."""
        if self.serving:
            if not self.dirty:
                from .serve import served_output

                self.aside = served_output.set_aside(config.site_dir)
                self.trash = served_output.Trash(config.site_dir) if self.aside is not None else None
            return  # serve keeps the last good pages itself
        from ..measure.encodings import TokenizerError

        from ..util.progress import Progress

        try:
            with Progress("promptspec: assembling", enabled=None) as bar:
                self.prebuilt = self._open_session().run(progress=bar)
            self.preloaded = self._load_options(self.prebuilt, self.session.counter)
        except (PromptspecError, TokenizerError) as exc:
            message = exc.oneline() if isinstance(exc, PromptspecError) else " ".join(str(exc).split())
            raise PluginError(f"promptspec: error: {message}") from None

    def _open_session(self):
        from .. import pipeline
        from ..measure.counter import TokenCounter
        from .build import PageCache

        key = (self.spec_dir, self.cache_dir)
        if self.session is None or self.session_key != key:
            self.session = pipeline.Session(self.spec_dir, counter=TokenCounter(self.cache_dir))
            self.session_key = key
            self.cache = PageCache()
        return self.session

    # -- generation -------------------------------------------------------------
    def _generate(self, config, files: Files):
        from .. import pipeline
        from ..util.progress import Progress
        from .pages import lint_page as site_lint
        from .build import PageCache, build_site

        self._open_session()
        counter = self.session.counter
        # A bar only under `mkdocs build` on a terminal (never in CI or logs).
        show = False if self.serving else None
        result, self.prebuilt = self.prebuilt, None  # on_pre_build's run, when there was one
        if result is None:
            with Progress("promptspec: assembling", enabled=show) as bar:
                result = self.session.run(progress=bar)
        self.watch_dirs = sorted(set(result.spec.fs.roots.values()))
        findings = site_lint.run(result)
        preloaded, self.preloaded = self.preloaded, None
        changes, history, conformance = preloaded or self._load_options(result, counter)
        rules = self.config.lint_rules if files.get_file_from_path(self.config.lint_rules) is not None else None
        # Pages are kept for the next rebuild only under serve; `mkdocs build` runs once.
        cache = self.cache if self.serving else PageCache(keep=False)
        with Progress("promptspec: pages", enabled=show) as bar:
            site = build_site(
                result, prefix=self.prefix, links="dir" if config.use_directory_urls else "html",
                findings=findings, changes=changes, rules_page=rules,
                variant_pages=self.config.variant_pages, list_limit=self.config.list_limit,
                cache=cache, progress=bar, diagrams=self.diagrams, conformance=conformance,
                history=history, history_chart=tuple(map(str, self.config.history_chart)),
            )
        if not self.serving:
            from ..assemble.conversation import forget_threads

            forget_threads()  # made into pages; a one-off build need not hold them while MkDocs writes
        changed = self.session.changes
        redone = "" if changed is None or changed.full else f", {len(changed.variants)} re-assembled, {changed.threads_kept} threads kept"
        timings = pipeline.format_timings(result.timings)
        self.summary = lambda: (
            f"promptspec: {len(result.variants)} variants{redone}, {len(site.pages)} pages "
            f"({site.variant_page_count} variant pages, {cache.made} made, {cache.reused} kept; "
            f"{self.fast.fast} rendered fast, {self.fast.reused} renders reused, {self.fast.whole} pages reused whole, "
            f"{self.unchanged.kept} files left as they were, {self.unchanged.rewritten} pages rewritten around new blocks) · {timings}"
        )
        return site, result

    def _load_options(self, result, counter):
        """(changes, history, conformance) from the options `base`, `history` and
        `conformance`.  `mkdocs build` loads them in on_pre_build, before MkDocs
        cleans site_dir, so a bad one fails with the previous site in place."""
        from .pages import changes as site_changes
        from .base import BaseLoader

        if self.bases is None:
            self.bases = BaseLoader()
        t = time.perf_counter()
        try:
            changes = self.bases.load(self.config.base, self.spec_dir, result, counter=counter, root=self.base_dir)
        except PromptspecError as exc:
            message = exc.oneline()
            if not self.serving:
                raise PluginError(f"promptspec: error: {message}") from None
            _report(f"promptspec: error: {message} (the Changes page and badges are off until it is fixed)")
            self.base_error = message
            changes = site_changes.failed(self.config.base, message)
        result.timings["base"] = time.perf_counter() - t
        history = self._history(counter) if self.config.history else None
        conformance = None
        if self.config.conformance:
            from .pages import conformance as site_conformance

            conformance = site_conformance.load(self.base_dir / self.config.conformance)
        return changes, history, conformance

    def _history(self, counter):
        """The History section's data (option `history`); releases are kept across serve rebuilds."""
        from ..review.history import compare as history
        from ..review.history import series
        from .pages import history_pages

        if self.series is None:
            self.series = series.SeriesCache()
        t = time.perf_counter()
        try:
            sides = history_pages.parse_option(self.config.history)
            releases = series.load_series(sides, spec_dir=self.spec_dir, counter=counter, root=self.base_dir, cache=self.series)
        except PromptspecError as exc:
            if not self.serving:
                raise PluginError(f"promptspec: error: option 'history': {exc.oneline()}") from None
            _report(f"promptspec: error: option 'history': {exc.oneline()} (the History section is off until it is fixed)")
            return None
        built = history.build_history(releases)
        log.info("promptspec: history of %d releases in %.2f s", len(releases), time.perf_counter() - t)
        return built

    def _stub(self, message: str):
        """Pages for the nav when the spec has never built in this session."""
        from .build import Pages, Site, error_page, overview_pages

        nav = overview_pages(self.prefix)
        return Site(Pages({path: error_page(title, message) for title, path in nav}), Pages({}), nav, frozenset(p for _, p in nav))

    def on_files(self, files: Files, *, config) -> Files:
        from ..measure.encodings import TokenizerError

        if self.aside is not None:  # MkDocs has cleaned and writes nothing before on_files ends
            from .serve import served_output

            served_output.put_back(self.aside)

        self.base_error = None
        self.page_errors = {}
        try:
            site, result = self._generate(config, files)
        except (PromptspecError, TokenizerError) as exc:
            message = exc.oneline() if isinstance(exc, PromptspecError) else " ".join(str(exc).split())
            if not self.serving:
                raise PluginError(f"promptspec: error: {message}") from None
            _report(f"promptspec: error: {message} (showing the last good pages until it is fixed)")
            self.error = message
            site = self.last_site or self._stub(message)
        else:
            self.last_site = site
            self.result = result
            self.error = None

        from .build import assets
        from .serve.mkdocs_pages import ProducedFile

        self.digests.next_build()
        leave_out = self.serving and not self.dirty and self.config.fast_pages
        if leave_out:  # what a rebuild need not build is left out of it (served_pages)
            from .serve.served_pages import ServedFiles

            files = ServedFiles(files)
        keys = {}
        for group, is_page in ((site.pages, True), (site.files, False)):
            for path in group:
                inclusion = InclusionLevel.UNDEFINED if path in site.in_nav or not is_page else InclusionLevel.NOT_IN_NAV
                if group.made_on_read(path):
                    self._add(files, ProducedFile.make(config, path, group.reader(path), self.digests, inclusion=inclusion))
                else:
                    self._add(files, File.generated(config, path, content=group[path], inclusion=inclusion))
                if leave_out:
                    keys[path] = group.key(path)
        self.unchanged.start(files if leave_out else None, keys, (self.error, self.base_error))
        self.generated = site.pages
        if self.config.fast_pages:
            self.fast.start(config, keep=self.serving, deferred=site.pages.made_on_read)
        for path, data in sorted(assets().items()):
            self._add(files, File.generated(config, path, content=data))
        if self.config.mermaid_js:
            self._add(files, File.generated(config, MERMAID_JS, abs_src_path=str(Path(self.config.mermaid_js).resolve())))
        return files

    @staticmethod
    def _add(files: Files, file: File) -> None:
        existing = files.get_file_from_path(file.src_uri)
        if existing is not None:
            raise PluginError(
                f"promptspec: error: docs/{file.src_uri} clashes with a generated file "
                "(remove it, or set the plugin's 'path' option to another folder)"
            )
        files.append(file)

    def _ours(self, page) -> bool:
        return page.file.generated_by is not None and self.generated is not None and page.file.src_uri in self.generated

    def on_page_markdown(self, markdown: str, *, page, config, files) -> str:
        """Generated pages: their skeleton (mkdocs_pages.FastPages).  Hand-written
        pages: promptspec markers expanded from the spec."""
        if self._ours(page):
            return self.fast.markdown(markdown, page) if self.config.fast_pages else markdown
        if page.file.generated_by is not None or "promptspec:" not in markdown:
            return markdown
        if self.error is not None or self.result is None:
            return markdown  # the spec is broken (serve): markers stay, the banner says why
        from .output.examples import expand_examples

        try:
            missed: list[str] = []
            out = expand_examples(markdown, self.result, page=f"{self.docs_label}/{page.file.src_uri}",
                                  diagrams=self.diagrams, missed=missed)
            for line in missed:  # INFO, not WARNING: a guide written for another spec is no build error
                log.info("promptspec: example not shown: %s", line)
            return out
        except PromptspecError as exc:
            if not self.serving:
                raise PluginError(f"promptspec: error: {exc.oneline()}") from None
            _report(f"promptspec: error: {exc.oneline()}")
            self.page_errors[page.file.src_uri] = exc.oneline()
            return markdown

    @event_priority(50)  # before the search plugin writes its index (served_pages puts entries back)
    def on_post_build(self, *, config) -> None:
        try:
            self._post_build(config)
        finally:
            self.collector.resume()

    def _post_build(self, config) -> None:
        """Without `site_url`, MkDocs writes 404.html with links from the
        server's root ("/assets/..."), which break wherever the site is not
        served from the root (a project page, a folder opened from disk).
        Rewritten relative to the site's root folder, where 404.html is.
        Under serve, what the rebuild did not write, nor left as it was
        (served_pages), goes (served_output)."""
        self.fast.finish(kept=self.unchanged.left_out)
        files = self.unchanged.files
        order = Files.documentation_pages(files, inclusion=InclusionLevel.is_in_serve) if files is not None else ()
        keep = self.unchanged.finish(_search_entries(config), order)
        if self.trash is not None:  # the search index is written next (served_output.Trash)
            self.trash.move(Path(config.site_dir) / "search" / "search_index.json")
        if self.aside is not None:
            from .serve import served_output

            aside, self.aside = self.aside, None
            served_output.sweep(aside, keep)
        if self.trash is not None:
            trash, self.trash = self.trash, None
            trash.empty_later()
        if config.site_url:
            return
        path = Path(config.site_dir) / "404.html"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            fixed = _ROOTED.sub(lambda m: f'{m.group(1)}="{m.group(2) or "./"}"', text)
            fixed = fixed.replace('"base": "/"', '"base": "."', 1)  # Material's search and palette scripts
            if fixed != text:
                path.write_text(fixed, encoding="utf-8")

    def on_build_error(self, *, error) -> None:
        """A rebuild that failed leaves the served site as far as it got, as
        MkDocs' own does, but never in the hidden holder."""
        self.collector.resume()
        if self.aside is not None:
            from .serve import served_output

            aside, self.aside = self.aside, None
            served_output.put_back(aside)
        if self.trash is not None:
            trash, self.trash = self.trash, None
            trash.empty_later()

    def on_nav(self, nav, *, config, files):
        self.nav = nav
        if self._reuse_is_safe(config):  # changed pages made without MkDocs where they can be (served_pages)
            from .serve.served_pages import pages_read_by_one, write_page

            rewrite = (lambda f: self.fast.rewrite_file(f, self._banners(f.src_uri)) if self._ours(f.page) else None)
            self.unchanged.leave_out(rewrite if pages_read_by_one(self, config) else None,
                                     lambda f, output: write_page(f, output, self.trash))
        return nav

    @event_priority(100)  # before the search plugin indexes the page
    def _before_search(self, context, *, page, config, nav):
        """The search index is about to read the page: a generated page it
        indexes gets its excluded elements emptied for that read
        (serve/search_input.py: the same entries, a fraction of the parse)."""
        entries = _search_entries(config)
        self.unchanged.mark(page, entries)
        if entries is not None and self._ours(page) and page.content \
                and not (page.meta.get("search") or {}).get("exclude") and self._only_search_reads_context(config):
            self.shown = (page, page.content)
            page.content = search_input.for_index(page.content)
        return context

    @event_priority(-100)  # after the search plugin, before the theme renders the page
    def _after_search(self, context, *, page, config, nav):
        if self.shown is not None:
            if self.shown[0] is page:
                page.content = self.shown[1]
            self.shown = None
        return context

    on_page_context = CombinedEvent(_before_search, _after_search)

    def on_env(self, env, *, config, files):
        """Every page has been read and rendered: the theme's templates
        compiled in an earlier build of this process (compiled_templates);
        under serve, the pages that can be reused whole
        (mkdocs_pages.FastPages.env); the build's log line."""
        self.templates.attach(env)
        if self.config.fast_pages:
            from mkdocs.commands.build import _populate_page

            from .serve.mkdocs_pages import site_signature

            site = site_signature(config, self.nav) if self.serving and self._reuse_is_safe(config) else None
            self.unchanged.confirm(site, lambda page: _populate_page(page, config, files))
            env = self.fast.env(env, files, site)
        if self.summary is not None:
            log.info("%s", self.summary())
            self.summary = None
        return env

    def _reuse_is_safe(self, config) -> bool:
        """A page reused whole skips the theme, not the plugins: only when no
        plugin changes a page's HTML before this one's on_post_page, and the
        only other on_page_context is Material's search (which leaves pages out
        of its index alone), is the reused page what a new render would give."""
        post = config.plugins.events.get("post_page", [])
        if not post or getattr(post[0], "__self__", None) is not self:
            return False
        return self._only_search_reads_context(config)

    def _only_search_reads_context(self, config) -> bool:
        """No on_page_context but this plugin's and Material's search: nobody
        else sees a page between the two (what _before_search gives the
        index, what a reused page skips)."""
        for handler in config.plugins.events.get("page_context", []):
            owner = getattr(handler, "__self__", None)
            if owner is not self and not type(owner).__module__.startswith("material.plugins.search"):
                return False
        return True

    def on_post_page(self, output: str, *, page, config) -> str:
        if self.trash is not None:  # MkDocs writes the page next: a new file, not one truncated (served_output)
            self.trash.move(page.file.abs_dest_path)
        return self.fast.post_page(output, page) if self.config.fast_pages else output

    def on_page_content(self, html: str, *, page, config, files) -> str:
        if self.config.fast_pages and self._ours(page):
            html = self.fast.content(html, page, config, files)
        return self._banners(page.file.src_uri) + html

    def _banners(self, uri: str) -> str:
        """What goes ahead of a page's HTML: why it is not from this build's spec or base."""
        banners = []
        if self.error is not None:
            banners.append(("the spec has an error; these pages are from the last good build", self.error))
        if self.base_error is not None:
            banners.append(("the base for the Changes page could not be loaded; changes are not shown", self.base_error))
        if uri in self.page_errors:
            banners.append(("an example on this page could not be rendered", self.page_errors[uri]))
        return "".join(_banner(title, message) for title, message in banners)


def _search_entries(config) -> list | None:
    """The entries of Material's search index being built (what served_pages
    splices), or None without that plugin."""
    for plugin in config.plugins.values():
        if type(plugin).__module__.startswith("material.plugins.search"):
            index = getattr(plugin, "search_index", None)
            entries = getattr(index, "entries", None)
            return entries if isinstance(entries, list) else None
    return None


def _banner(title: str, message: str) -> str:
    return (
        '<div class="admonition failure ps-error">'
        f'<p class="admonition-title">promptspec: {h(title)}</p>'
        f"<pre><code>{h(message)}</code></pre></div>\n"
    )
