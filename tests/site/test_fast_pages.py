"""The fast path for generated pages (site/fast_pages.py, site/mkdocs_pages.py):
the same site as the normal Markdown path, under MkDocs and ProperDocs, with
a fallback when something changes its placeholders; variant pages made when
read and out of the search index; renders reused under `mkdocs serve`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.site.serve import fast_pages
from promptspec.site.build import PageCache, build_site

from _helpers import TEMPLATES, break_spec, mkdocs_build, mkdocs_config, mkdocs_serve, poll, subprocess_env
from required import require_module

FORGED = "<!--promptspec:block 0--> <!-- x --> -->"
"""Spec text that looks like a placeholder: it must reach the page as text."""


PRE = re.compile(r"<pre\b.*?</pre>", re.S)


def _norm(html: str) -> str:
    """HTML modulo whitespace between and inside blocks, except in <pre>:
    prompt text is shown exactly, so its whitespace is compared as it is."""
    squeezed = [re.sub(r"\s+", " ", re.sub(r">\s+<", "><", part)).strip() for part in PRE.split(html)]
    return "\n<pre-as-is>\n".join(squeezed) + "\n" + "\n".join(PRE.findall(html))


def _spec(tmp: Path) -> Path:
    spec = tmp / "spec"
    shutil.copytree(TEMPLATES, spec)
    body = spec / "fragments" / "realtime.md"
    body.write_text(body.read_text(encoding="utf-8") + FORGED + "\n", encoding="utf-8")
    return spec


def _html_files(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html"))}


def _build(tmp: Path, spec: Path, name: str, *, engine: str = "mkdocs", extra_cfg: dict | None = None, **options) -> tuple[Path, str]:
    folder = tmp / name
    cfg = mkdocs_config(folder, spec, base="none", **options)
    if extra_cfg:
        data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
        data.update(extra_cfg)
        cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if engine == "mkdocs":
        proc = mkdocs_build(cfg)
    else:
        proc = subprocess.run([sys.executable, "-m", engine, "build", "--strict", "-f", str(cfg)],
                              capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return folder / "site", proc.stderr


def _fast_count(log: str) -> int:
    return int(re.search(r"(\d+) rendered fast", log).group(1))


# ---------------------------------------------------------------------------
# The split itself


def test_split_sets_aside_only_blocks_markdown_copies_verbatim() -> None:
    page = (
        '---\ntitle: "T"\n---\n\n# Title\n\n'
        '<div class="a">\n<p>one</p>\n</div>\n\n'
        '<p class="b">two</p>\n\n'
        "```mermaid\nflowchart LR\n```\n\n"
        "<span>inline-level: a paragraph</span>\n\n"
        '<div markdown="1">\n**md_in_html acts on this**\n</div>\n\n'
        "<div>not closed at its end\n\n"
        "## Heading\n\n"
        '<figure class="c">\n</figure>\n'
    )
    sk = fast_pages.split(page)
    # Consecutive raw chunks go together; the page's final newline stays in the skeleton.
    assert sk.blocks == ('<div class="a">\n<p>one</p>\n</div>\n\n<p class="b">two</p>', '<figure class="c">\n</figure>')
    assert sk.markdown.endswith("## Heading\n\n<!--promptspec:block 1-->\n")
    assert "<!--promptspec:block 0-->\n\n```mermaid" in sk.markdown
    for kept in ("# Title", "```mermaid", "<span>inline-level", 'markdown="1"', "<div>not closed", "## Heading", 'title: "T"'):
        assert kept in sk.markdown
    assert fast_pages.restore(sk.markdown, sk.blocks) == page
    # A placeholder lost or repeated: no restore (the caller renders normally).
    assert fast_pages.restore(sk.markdown.replace("<!--promptspec:block 1-->", ""), sk.blocks) is None
    assert fast_pages.restore(sk.markdown + "<!--promptspec:block 0-->", sk.blocks) is None
    assert fast_pages.unpack(fast_pages.pack(sk.blocks)) == sk.blocks


def test_every_generated_page_splits_and_restores_to_itself(tmp_path: Path) -> None:
    site = build_site(pipeline.run(_spec(tmp_path)), links="dir", variant_pages="all")
    split = 0
    for path, text in site.pages.items():
        sk = fast_pages.split(text)
        assert fast_pages.restore(sk.markdown, sk.blocks) == text, path
        split += bool(sk.blocks)
        assert FORGED not in sk.markdown  # the spec's look-alike stays inside a block, escaped
    assert split == len(site.pages)


# ---------------------------------------------------------------------------
# Real builds: fast and normal paths agree


@pytest.fixture(scope="module")
def html_sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[tuple[Path, str], tuple[Path, str]]:
    """((site, log) of the fast path, (site, log) of the normal path) with the
    default diagrams (html), built once for the tests that only read them."""
    tmp = tmp_path_factory.mktemp("html-sites")
    spec = _spec(tmp)
    return _build(tmp, spec, "fast", diagrams="html"), _build(tmp, spec, "normal", diagrams="html", fast_pages=False)


@pytest.mark.parametrize("diagrams", ["html", "mermaid"])
def test_fast_path_gives_the_normal_paths_site(tmp_path: Path, diagrams: str, request: pytest.FixtureRequest) -> None:
    if diagrams == "html":
        (fast, fast_log), (normal, normal_log) = request.getfixturevalue("html_sites")
    else:
        spec = _spec(tmp_path)
        fast, fast_log = _build(tmp_path, spec, "fast", diagrams=diagrams)
        normal, normal_log = _build(tmp_path, spec, "normal", diagrams=diagrams, fast_pages=False)
    a, b = _html_files(fast), _html_files(normal)
    assert a.keys() == b.keys() and len(a) > 100
    for rel in a:
        assert _norm(a[rel]) == _norm(b[rel]), rel
    assert (fast / "search" / "search_index.json").read_bytes() == (normal / "search" / "search_index.json").read_bytes()
    generated = sum(1 for rel in a if rel.startswith("prompts/"))
    assert _fast_count(fast_log) == generated and _fast_count(normal_log) == 0
    variant = next(rel for rel in a if rel.startswith("prompts/variants/") and "pair_programming" in rel)
    assert "&lt;!--promptspec:block 0--&gt;" in a[variant] and "<!--promptspec" not in a[variant]
    assert 'id="s-base"' in a[variant] and '<h2 id="tokens-and-send-order">' in a[variant]  # blocks and TOC headings


def test_fast_path_under_properdocs(tmp_path: Path) -> None:
    require_module("properdocs", "ProperDocs is a test extra: pip install -e '.[test]'")
    spec = _spec(tmp_path)
    fast, log = _build(tmp_path, spec, "fast", engine="properdocs")
    normal, _ = _build(tmp_path, spec, "normal", engine="properdocs", fast_pages=False)
    a, b = _html_files(fast), _html_files(normal)
    assert a.keys() == b.keys() and len(a) > 100
    assert [rel for rel in a if _norm(a[rel]) != _norm(b[rel])] == []
    assert _fast_count(log) > 100


EXTENSION = '''
import markdown

class Doubler(markdown.postprocessors.Postprocessor):
    def run(self, text):
        return text.replace("<!--promptspec:block 0-->", "<!--promptspec:block 0-->" * 2)

class DoubleFirstBlock(markdown.Extension):
    def extendMarkdown(self, md):
        md.postprocessors.register(Doubler(md), "double_first_block", 0)

def makeExtension(**kwargs):
    return DoubleFirstBlock(**kwargs)
'''


def test_a_changed_placeholder_falls_back_to_the_normal_path(tmp_path: Path, monkeypatch) -> None:
    """An extension that repeats a placeholder: the page is rendered again
    the normal way, and the site is still the normal path's."""
    (tmp_path / "doubler_ext.py").write_text(EXTENSION, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))  # importable by the build, which runs in this process
    spec = _spec(tmp_path)
    ext = {"markdown_extensions": ["attr_list", "md_in_html", "tables", "admonition", {"toc": {"permalink": True}}, "doubler_ext"]}
    fast, log = _build(tmp_path, spec, "fast", extra_cfg=ext)
    normal, _ = _build(tmp_path, spec, "normal", extra_cfg=ext, fast_pages=False)
    assert "a placeholder was changed during rendering; rendered the normal way" in log
    assert _fast_count(log) == 0
    a, b = _html_files(fast), _html_files(normal)
    assert a.keys() == b.keys() and len(a) > 100
    assert [rel for rel in a if _norm(a[rel]) != _norm(b[rel])] == []


HOOK = '''
import json, os, re

sizes = {}

def on_page_context(context, page, config, nav):
    if page.file.src_uri.startswith("prompts/variants/"):
        sizes[page.file.src_uri] = len(page.content)
        if os.environ.get("STRIP_PLACEHOLDERS"):
            page.content = re.sub(r"<!--promptspec:block \\d+-->", "", page.content)
    return context

def on_post_build(config):
    with open(os.environ["SIZES_OUT"], "w") as f:
        json.dump(sizes, f)
'''


def test_variant_pages_hold_only_their_skeleton_until_written(tmp_path: Path, monkeypatch) -> None:
    """A variant page's content, while MkDocs holds every page, is its
    skeleton's HTML; the written page is whole.  A plugin that drops the
    placeholders meanwhile gets a warning that stops a strict build."""
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    monkeypatch.setenv("SIZES_OUT", str(tmp_path / "sizes.json"))
    spec = _spec(tmp_path)
    site, _ = _build(tmp_path, spec, "fast", extra_cfg={"hooks": [str(tmp_path / "hook.py")]})
    sizes = json.loads((tmp_path / "sizes.json").read_text())
    assert len(sizes) == 88
    for uri, held in sizes.items():
        written = (site / uri.removesuffix(".md") / "index.html").read_text(encoding="utf-8")
        assert 'id="s-base"' in written
        assert held * 10 < len(written), uri

    monkeypatch.setenv("STRIP_PLACEHOLDERS", "1")
    cfg = mkdocs_config(tmp_path / "stripped", spec, base="none")
    data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    data["hooks"] = [str(tmp_path / "hook.py")]
    cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    proc = mkdocs_build(cfg)
    assert proc.returncode != 0
    assert "lost a placeholder after rendering" in proc.stderr and "fast_pages: false" in proc.stderr
    data["plugins"][1]["promptspec"]["fast_pages"] = False
    cfg.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert mkdocs_build(cfg).returncode == 0


def test_packed_blocks_give_the_same_pages(tmp_path: Path, monkeypatch) -> None:
    """A site past HELD_RAW packs its variant pages' blocks until they are
    written: the same pages as holding them raw (in-process builds, the
    budget set to nothing)."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    from promptspec.site.serve import mkdocs_pages

    spec = _spec(tmp_path)
    sites = {}
    real_pack = fast_pages.pack
    for name, budget in (("raw", mkdocs_pages.HELD_RAW), ("packed", 0)):
        monkeypatch.setattr(mkdocs_pages, "HELD_RAW", budget)
        packs: list[int] = []
        monkeypatch.setattr(fast_pages, "pack", lambda blocks: packs.append(1) or real_pack(blocks))
        build(load_config(str(mkdocs_config(tmp_path / name, spec, base="none"))))
        sites[name] = (_html_files(tmp_path / name / "site"), len(packs))
    assert sites["raw"][1] == 0 and sites["packed"][1] == 88
    assert sites["raw"][0] == sites["packed"][0]


def test_variant_pages_are_out_of_the_search_index(html_sites) -> None:
    (site, _), _ = html_sites  # the default diagrams are html (no mermaid_js)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert not any(loc.startswith("prompts/variants/") for loc in locations)
    assert {"prompts/", "prompts/models/harbor-5/", "prompts/fragments/realtime/", "prompts/modes/plan/"} <= locations
    assert any(doc["title"].startswith("Fragment realtime") for doc in index["docs"])


def test_variant_pages_are_made_when_read(tmp_path: Path) -> None:
    result = pipeline.run(TEMPLATES)
    cache = PageCache(keep=False)
    site = build_site(result, links="dir", cache=cache)
    assert cache.made == 0 and site.pages.made_on_read(f"prompts/variants/{result.variants[0].slug}.md")
    path = f"prompts/variants/{result.variants[0].slug}.md"
    first = site.pages[path]
    assert cache.made == 1
    assert site.pages[path] == first and cache.made == 2  # made again: nothing held it
    assert not site.pages.made_on_read("prompts/index.md")
    assert dict(site.pages) == dict(build_site(result, links="dir").pages)


# ---------------------------------------------------------------------------
# mkdocs serve


def _served(page: str) -> str:
    """A served page without what only serve adds (the live-reload script) or
    changes (links from site_url): comparable with a built one."""
    body = page[page.index("<body"):page.index("</body>")]
    body = re.sub(r"<script[^>]*>[^<]*livereload[^<]*</script>", "", body)
    return _norm(re.sub(r'https?://127\.0\.0\.1:\d+/', "/", body))


def test_serve_reuses_work_and_shows_what_a_fresh_build_shows(tmp_path: Path) -> None:
    """An edit: the pages it changed are their last theme output with their
    new blocks put in, made without MkDocs, the others are left as they were
    (served_pages), and the served pages are what
    `mkdocs build` makes of the edited spec.  A config edit (site_name, in
    every page's header) is a new site: nothing is reused whole."""
    spec = _spec(tmp_path)
    config = mkdocs_config(tmp_path, spec, base="none")
    log = tmp_path / "serve.log"
    plan = "harbor-5--friendly--plan--workspace-write"
    other = "harbor-5--friendly--pair_programming--workspace-write"
    with mkdocs_serve(config, log) as server:
        poll(f"{server}/prompts/variants/{plan}/", lambda b: "Before you propose a plan" in b)
        body = spec / "fragments" / "review_checklist.md"
        body.write_text(body.read_text(encoding="utf-8").replace("Before you propose a plan", "Edited while serving"), encoding="utf-8")
        served = {slug: poll(f"{server}/prompts/variants/{slug}/", lambda b: "Edited while serving" in b or "plan" not in slug)
                  for slug in (plan, other)}
        rebuild = [line for line in log.read_text(encoding="utf-8").splitlines() if "renders reused" in line][-1]
        fresh, _ = _build(tmp_path, spec, "fresh")
        for slug, page in served.items():
            built = (fresh / "prompts" / "variants" / slug / "index.html").read_text(encoding="utf-8")
            assert _served(page) == _served(built), slug
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
        data["site_name"] = "Renamed while serving"
        config.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        poll(f"{server}/prompts/variants/{other}/", lambda b: "Renamed while serving" in b)
        renamed = [line for line in log.read_text(encoding="utf-8").splitlines() if "renders reused" in line][-1]
        # A broken spec puts a banner on the last good pages; fixed, it goes:
        # a page reused whole must not bring back the theme output that had it.
        break_spec(spec)
        poll(f"{server}/prompts/variants/{other}/", lambda b: "ps-error" in b)
        shutil.copy(TEMPLATES / "fragments" / "apps.yaml", spec / "fragments" / "apps.yaml")
        poll(f"{server}/prompts/variants/{other}/", lambda b: "ps-error" not in b)
    def figure(line: str, what: str) -> int:
        return int(re.search(rf"(\d+) {what}", line).group(1))

    # The 24 plan variants changed: their pages are made by the plugin from
    # their skeletons' renders and last theme output (served_pages); the pages
    # MkDocs built have no Markdown rendered (their skeletons' renders reused);
    # the other variants' downloads, and their pages where nothing on them
    # changed, are left as they were.
    assert figure(rebuild, "renders reused") == figure(rebuild, "rendered fast")
    assert figure(rebuild, "re-assembled") == 24 and figure(rebuild, "pages rewritten around new blocks") == 24
    assert figure(rebuild, "files left as they were") >= 88 - 24
    assert figure(renamed, "pages reused whole") == figure(renamed, "pages rewritten around new blocks") == 0
    assert figure(renamed, "files left as they were") == 0


def test_serve_dirty_rebuilds_only_the_pages_an_edit_changed(tmp_path: Path) -> None:
    """`mkdocs serve --dirty` asks each file whether it changed: a generated
    file answers by its content, so only the variant pages whose text the
    edit changed (and the overview pages) are built again; the others stay
    as the last build wrote them."""
    spec = _spec(tmp_path)
    config = mkdocs_config(tmp_path, spec, base="none")
    log = tmp_path / "serve.log"
    body = spec / "fragments" / "review_checklist.md"
    old_text = body.read_text(encoding="utf-8")
    new_text = old_text.replace("Before you propose a plan", "Edited while serving")

    def variant_pages() -> dict[str, str]:
        pages = build_site(pipeline.run(spec), links="dir").pages
        return {p: pages[p] for p in pages if pages.made_on_read(p)}

    old_pages = variant_pages()
    body.write_text(new_text, encoding="utf-8")
    new_pages = variant_pages()
    body.write_text(old_text, encoding="utf-8")
    changed = {p for p in old_pages if old_pages[p] != new_pages[p]}
    kept = sorted(set(old_pages) - changed)
    assert changed and kept
    plan = next(p for p in changed if "--plan--" in p).removesuffix(".md")
    other = kept[0].removesuffix(".md")
    with mkdocs_serve(config, log, args=("--dirty", "--no-strict")) as server:  # a dirty build warns: strict would stop it
        before = poll(f"{server}/{other}/", lambda b: "<article" in b)
        body.write_text(new_text, encoding="utf-8")
        poll(f"{server}/{plan}/", lambda b: "Edited while serving" in b)
        after = poll(f"{server}/{other}/", lambda b: "<article" in b)
        lines = [line for line in log.read_text(encoding="utf-8").splitlines() if "rendered fast" in line]
    first, rebuild = (int(re.search(r"(\d+) rendered fast", line).group(1)) for line in (lines[0], lines[-1]))
    assert first == 143 and rebuild == len(changed) + (143 - 88)  # the changed variant pages and every overview page (conversation pages too)
    assert _served(after) == _served(before)
