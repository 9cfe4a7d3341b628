"""A serve rebuild that leaves unchanged generated files out of MkDocs' work
(site/served_pages.py) serves what a fresh full build makes, byte for byte:
the pages the edit changed and those it did not, the overview pages, the
explorer data, the lint and changes (lock) pages, the search index."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest
import yaml
from _helpers import TEMPLATES, gc_collections, mkdocs_build, mkdocs_config

URL = "http://127.0.0.1:8000/"  # never listened on: it only gives build() serve's inclusion levels


class ServeLoop:
    """`mkdocs serve`'s rebuilds in this process: one config loaded per build
    (as serve's builder does), the plugin instance kept across them (MkDocs'
    plugin cache), the same temp site written over each time."""

    def __init__(self, config: Path, site: Path) -> None:
        self.config, self.site = config, site
        self.plugins: dict = {}  # a new serve: new plugin instances
        self.first = True

    def build(self) -> list[str]:
        """One rebuild; the plugin's log lines of it."""
        from mkdocs.commands.build import build
        from mkdocs.config import load_config
        from mkdocs.config.defaults import MkDocsConfig

        cache = dict(MkDocsConfig._schema)["plugins"].plugin_cache  # shared with other builds in this process
        cache.clear()
        cache.update(self.plugins)
        cfg = load_config(str(self.config), site_dir=str(self.site))
        self.plugins = dict(cache)
        if self.first:
            cfg.plugins.on_startup(command="serve", dirty=False)
            self.first = False
        lines: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
        logger = logging.getLogger("mkdocs.plugins.promptspec")
        level = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        try:
            build(cfg, serve_url=URL)
        finally:
            logger.removeHandler(handler)
            logger.setLevel(level)
        return [line for line in lines if " variants" in line]


def _tree(folder: Path) -> dict[str, bytes]:
    """The served site's files; not the hidden folders of a rebuild in place
    (served_output: the files written over, which a thread is removing)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for top in sorted(folder.iterdir()) if not top.name.startswith(".promptspec-")
            for p in ([top] if top.is_file() else sorted(top.rglob("*"))) if p.is_file()}


def _left_as_they_were(lines: list[str]) -> int:
    (line,) = lines
    return int(re.search(r"(\d+) files left as they were", line).group(1))


def _rewritten(lines: list[str]) -> int:
    (line,) = lines
    return int(re.search(r"(\d+) pages rewritten around new blocks", line).group(1))


def _same_as_a_fresh_build(config: Path, served: Path, tmp: Path, name: str) -> dict[str, bytes]:
    built = tmp / f"built-{name}"
    proc = mkdocs_build(config, "-d", str(built))
    assert proc.returncode == 0, proc.stderr
    got, want = _tree(served), _tree(built)
    assert sorted(got) == sorted(want)
    differ = [path for path in want if got[path] != want[path]]
    assert not differ, differ[:10]
    return want


def _serving(tmp_path: Path, base: str) -> tuple[Path, Path, Path, ServeLoop]:
    """(spec, config, served site, loop) of a copy of the embedded spec with a
    page per variant, after the serve loop's first build."""
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    config = mkdocs_config(tmp_path, spec, base=base, variant_pages="all")
    served = tmp_path / "served"
    loop = ServeLoop(config, served)
    loop.build()
    return spec, config, served, loop


@pytest.mark.slow
def test_a_serve_rebuild_serves_what_a_fresh_build_makes(tmp_path: Path) -> None:
    spec, config, served, loop = _serving(tmp_path, "lock")
    before = _same_as_a_fresh_build(config, served, tmp_path, "first")

    fragment = spec / "fragments" / "realtime.md"  # sent by the pair_programming variants only
    fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited while serving.\n", encoding="utf-8")
    lines = loop.build()
    kept = _left_as_they_were(lines)
    after = _same_as_a_fresh_build(config, served, tmp_path, "edited")

    changed = {path for path in after if before.get(path) != after[path]}
    pair = [p for p in changed if "--pair_programming--" in p and p.endswith("index.html")]
    assert pair and all("Edited while serving" in after[p].decode() for p in pair)
    # They now differ from the lock, which their heading says: MkDocs made them again.  A
    # second edit changes their blocks only, and the plugin writes them itself (served_pages).
    assert _rewritten(lines) == 0
    fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited twice.\n", encoding="utf-8")
    lines = loop.build()
    twice = _same_as_a_fresh_build(config, served, tmp_path, "edited-twice")
    assert all("Edited twice" in twice[p].decode() for p in pair)
    assert _rewritten(lines) == len([p for p in pair if "/variants/" in p]) > 0
    fragment.write_text(fragment.read_text(encoding="utf-8").replace("Edited twice.\n", ""), encoding="utf-8")
    lines = loop.build()
    assert _rewritten(lines) > 0 and _tree(served) == after  # what the fresh build made of this text
    # Pages of the other modes did not change (where a variant ranks is read from the totals
    # file, which did), and were left out of MkDocs' work.
    assert any("--plan--" in p for p in after) and not any("--plan--" in p for p in changed)
    assert all("--pair_programming--" in p for p in changed if "/variants/" in p)
    assert "prompts/explorer/totals.json" in changed
    assert kept > len([p for p in after if "/variants/" in p]) // 2
    # What the lock comparison, the overview pages and the explorer say did change.
    for page in ("prompts/changes/index.html", "prompts/index.html", "prompts/explorer/explorer-data.json",
                 "search/search_index.json"):
        assert page in changed, page
    assert "prompts/lint/index.html" in after

    # Back to the text of the lock: the changes page and badges go, every page is as built.
    fragment.write_text(fragment.read_text(encoding="utf-8").replace("Edited while serving.\n", ""), encoding="utf-8")
    loop.build()
    again = _tree(served)
    assert again == before  # what the first fresh build made of the same text (builds are deterministic: test_site)

    # A new site name is in every page's header: nothing can be left as it was.
    original = config.read_text(encoding="utf-8")
    config.write_text(original + "site_name: Renamed site\n", encoding="utf-8")
    fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited again.\n", encoding="utf-8")
    lines = loop.build()
    renamed = _same_as_a_fresh_build(config, served, tmp_path, "renamed")
    assert _left_as_they_were(lines) == 0 and _rewritten(lines) == 0
    fragment.write_text(fragment.read_text(encoding="utf-8").replace("Edited again.\n", ""), encoding="utf-8")
    assert b"Renamed site" in renamed["prompts/variants/harbor-5--friendly--plan--workspace-write/index.html"]
    config.write_text(original, encoding="utf-8")
    loop.build()

    # A rebuild that changes nothing leaves every generated file as it was.
    lines = loop.build()
    assert _left_as_they_were(lines) >= len([p for p in again if "/variants/" in p])
    assert _tree(served) == before


def test_serve_packs_blocks_past_its_own_budget_and_serves_the_same_pages(tmp_path: Path, monkeypatch) -> None:
    """Under serve the raw blocks held while pages are written have a budget
    of their own (mkdocs_pages.HELD_RAW_SERVING, below a one-off build's):
    past it the deferred pages' blocks are packed, in the first build and in
    a rebuild, and what is served is still what a fresh build makes."""
    from promptspec.site.serve import fast_pages, mkdocs_pages

    real_pack = fast_pages.pack
    packs: list[int] = []
    monkeypatch.setattr(fast_pages, "pack", lambda blocks: packs.append(1) or real_pack(blocks))
    monkeypatch.setattr(mkdocs_pages, "HELD_RAW_SERVING", 0)
    # The changed pages go through MkDocs, as when their skeleton changed (else
    # the plugin writes them itself: served_pages, tested above).
    monkeypatch.setattr(mkdocs_pages.FastPages, "rewrite_file", lambda self, file, banners: None)
    spec, config, served, loop = _serving(tmp_path, "none")
    assert len(packs) == 88  # every variant page, though a build holds them raw (HELD_RAW)
    _same_as_a_fresh_build(config, served, tmp_path, "first")
    fragment = spec / "fragments" / "realtime.md"
    fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited while serving.\n", encoding="utf-8")
    packs.clear()
    lines = loop.build()
    assert 0 < len(packs) < 88  # the pages the edit changed
    # Built by MkDocs, their theme output is the last build's (mkdocs_pages.FastPages.env).
    (line,) = lines
    assert int(re.search(r"(\d+) pages reused whole", line).group(1)) == len(packs)
    _same_as_a_fresh_build(config, served, tmp_path, "edited")


READER_HOOK = """
def on_page_content(html, page, config, files):
    with open(SEEN, "a", encoding="utf-8") as f:
        f.write(page.file.src_uri + "\\n")
    return html
"""


def test_a_plugin_that_reads_pages_sees_every_page_an_edit_changed(tmp_path: Path) -> None:
    """The plugin writes a changed variant page itself only when no other
    plugin reads or changes pages (here a hook's on_page_content): such a
    plugin is handed every page the edit changed, as without promptspec's
    shortcuts, and what is served is still what a fresh build makes."""
    seen = tmp_path / "seen.txt"
    (tmp_path / "reader_hook.py").write_text(f"SEEN = {str(seen)!r}\n" + READER_HOOK, encoding="utf-8")
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    config = mkdocs_config(tmp_path, spec, base="none", variant_pages="all")
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["hooks"] = [str(tmp_path / "reader_hook.py")]
    config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    served = tmp_path / "served"
    loop = ServeLoop(config, served)
    loop.build()
    seen.write_text("", encoding="utf-8")
    fragment = spec / "fragments" / "realtime.md"
    fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited while serving.\n", encoding="utf-8")
    lines = loop.build()
    pair = {p for p in seen.read_text(encoding="utf-8").split() if "--pair_programming--" in p}
    assert _rewritten(lines) == 0 and len(pair) == 16
    after = _same_as_a_fresh_build(config, served, tmp_path, "edited")
    assert all("Edited while serving" in after[p.removesuffix(".md") + "/index.html"].decode() for p in pair)


def test_serve_rebuilds_run_without_the_cyclic_collector_and_collect_after(tmp_path: Path, monkeypatch) -> None:
    """site/serve/idle_collect.py: while a serve rebuild makes its pages no
    collection walks the session's heap; one full collection follows the
    rebuild; serve's first build and a one-off build leave the collector alone."""
    import gc
    import time

    from promptspec.site.plugin import PromptspecPlugin

    real = PromptspecPlugin._generate
    seen: list[tuple[bool, int]] = []

    def generate(self, config, files):
        before = len(collections)
        try:
            return real(self, config, files)
        finally:
            seen.append((gc.isenabled(), len(collections) - before))

    monkeypatch.setattr(PromptspecPlugin, "_generate", generate)
    with gc_collections() as collections:
        spec, config, served, loop = _serving(tmp_path, "none")
        (plugin,) = [p for p in loop.plugins.values() if isinstance(p, PromptspecPlugin)]
        fragment = spec / "fragments" / "realtime.md"
        fragment.write_text(fragment.read_text(encoding="utf-8") + "Edited while serving.\n", encoding="utf-8")
        done = plugin.collector.collections
        loop.build()
        deadline = time.monotonic() + 10
        while plugin.collector.collections == done and time.monotonic() < deadline:
            time.sleep(0.02)
        assert plugin.collector.collections == done + 1 and 2 in collections and gc.isenabled()
        assert mkdocs_build(config, "-d", str(tmp_path / "built")).returncode == 0
    (first, first_n), (rebuild, rebuild_n), (one_off, one_off_n) = seen
    assert (rebuild, rebuild_n) == (False, 0)
    # The first serve build and a one-off build collect as usual.
    assert first and first_n > 0 and one_off and one_off_n > 0
