"""The site: generated pages, the MkDocs plugin, `promptspec build`.

Real builds throughout: `mkdocs build --strict` in a subprocess with the
repository's own mkdocs.yml (inherited, pointed at a tmp docs/site folder and
the spec under test), then the built HTML is read back and compared with what
the pipeline assembled.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.site.html import mermaid
from promptspec.site import build as site
from promptspec.site.index import Paths, relative
from promptspec.site.html.markup import md_inline, pre, prompt_html
from promptspec.measure.counter import TokenCounter

from required import require_shared
from _helpers import (
    MKDOCS_YML,
    REPO,
    TEMPLATES,
    break_spec,
    broken_links,
    build_ok,
    cli,
    expected_sections,
    mkdocs_build,
    mkdocs_config,
    mkdocs_serve,
    poll,
    search_sections,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"

PROMPT_RE = re.compile(r'<pre class="ps-prompt" data-ps-section="([^"]+)" data-search-exclude><code>(.*?)</code></pre>', re.S)
MERMAID_RE = re.compile(r'<pre class="mermaid"><code>(.*?)</code></pre>', re.S)

HOSTILE_BODY = (
    "{% raw %}*emph* _under_ <script>alert(1)</script> [link](x) {{ x }} {% y %}{% endraw %}\n"
    "\n"
    "    four leading spaces\n"
    "\ttab\tinside\n"
    "   \n"
    "&amp; &lt; &#96; \\* | a | b |\n"
    "```python\nfence()\n```\n"
    "~~~\ntilde\n~~~\n"
    '--8<-- "x.md"\n'
    "{++ critic ++} {== mark ==}\n"
    "\n"
    "\n"
    "end with two blank lines above\n"
)
HOSTILE_MARKER = '"]) ; click n1 call alert(1) %% <hostile & "marker"> #35; `tick`'
HOSTILE_DISPLAY = '"]) ; click n0 call alert(1) <img src=x onerror=alert(2)> | *x*'
HOSTILE_DESCRIPTION = "<script>alert(1)</script> | `code` *em* [l](u) {{ x }}"


# ---------------------------------------------------------------------------
# helpers


def variant_html(site_dir: Path, slug: str) -> str:
    return (site_dir / "prompts" / "variants" / slug / "index.html").read_text(encoding="utf-8")


def sections_in(page_html: str) -> dict[str, str]:
    return {key: html.unescape(body) for key, body in PROMPT_RE.findall(page_html)}


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def hostile_spec(root: Path) -> Path:
    """The embedded spec with hostile strings where a spec may put text."""
    spec = root / "hostile-spec"
    shutil.copytree(TEMPLATES, spec)
    apps = yaml.safe_load((spec / "fragments" / "apps.yaml").read_text())
    apps["description"] = HOSTILE_DESCRIPTION
    (spec / "fragments" / "apps.yaml").write_text(yaml.safe_dump(apps, sort_keys=False), encoding="utf-8")
    hostile = {
        "description": HOSTILE_DESCRIPTION,
        "owner": "<b>owner</b>",
        "role": "developer",
        "slot": "developer_extensions",
        "start": HOSTILE_MARKER + "\n",
        "end": "\n</INSTRUCTIONS>",
        "text": HOSTILE_BODY,
    }
    (spec / "fragments" / "hostile.yaml").write_text(yaml.safe_dump(hostile, sort_keys=False, allow_unicode=True), encoding="utf-8")
    models = json.loads((spec / "models.json").read_text())
    models["models"][0]["display_name"] = HOSTILE_DISPLAY
    models["models"][0]["description"] = HOSTILE_DESCRIPTION
    (spec / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    data = yaml.safe_load((spec / "spec.yaml").read_text())
    data["modes"]["plan"]["display_name"] = "Plan | <i>*x*</i>"
    data["modes"]["plan"]["description"] = HOSTILE_DESCRIPTION
    (spec / "spec.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return spec


# ---------------------------------------------------------------------------
# session builds


@pytest.fixture(scope="session")
def embedded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-embedded")
    site_dir = build_ok(mkdocs_config(tmp, TEMPLATES))
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp / "cache"))
    return site_dir, result


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-hostile")
    spec = hostile_spec(tmp)
    site_dir = build_ok(mkdocs_config(tmp, spec))
    result = pipeline.run(spec, counter=TokenCounter(tmp / "cache"))
    return site_dir, result


# ---------------------------------------------------------------------------
# the embedded spec


def test_embedded_site_builds_strict_with_every_page(embedded):
    site_dir, result = embedded
    assert len(result.variants) == 88
    for v in result.variants:
        assert (site_dir / "prompts" / "variants" / v.slug / "index.html").is_file()
        assert (site_dir / "prompts" / "variants" / f"{v.slug}.json").is_file()
    for f in result.spec.fragments:
        assert (site_dir / "prompts" / "fragments" / f.name / "index.html").is_file()
    for folder in ("models", "personalities", "modes", "fragments", "assembly"):
        assert (site_dir / "prompts" / folder / "index.html").is_file()
    assert (site_dir / "assets" / "promptspec" / "promptspec.css").is_file()
    # Generated, not written into docs/.
    assert not (REPO / "docs" / "prompts").exists()


def test_repository_mkdocs_yml_builds_strict(tmp_path):
    """The shipped config as is (its docs/ included), into a tmp site dir."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        proc = mkdocs_build(MKDOCS_YML, "-d", str(tmp_path / "site"))
    finally:
        os.chdir(cwd)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "prompts" / "index.html").is_file()
    for page in ("lint", "changes"):
        assert (tmp_path / "site" / "prompts" / page / "index.html").is_file()
    # The guide's example markers are rendered from the embedded spec at build time.
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "cache"))

    def section(variant_id: str, fragment: str) -> str:
        req = next(r for r in result.requests if r.variant.id == variant_id)
        return next(s.text for _, _, s in req.sections if s.fragment == fragment)

    env = section("harbor-5/default/default/workspace-write", "environment_context")
    assert "<environment_context>" in env
    anatomy = (tmp_path / "site" / "guide" / "fragment-anatomy" / "index.html").read_text(encoding="utf-8")
    assert html.escape(env) in anatomy
    assert "<environment_context>" not in anatomy
    guide = (tmp_path / "site" / "guide" / "index.html").read_text(encoding="utf-8")
    assert html.escape(section("harbor-5/default/plan/workspace-write", "collaboration_mode")) in guide
    assert "<!-- promptspec:example fragment=collaboration_mode" not in guide  # expanded, not left as a comment
    # The nav lists the guide and the reference pages.
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>\s*</div>', guide, re.S).group(0)
    for href in ("fragment-anatomy/", "add-a-fragment/", "lint-rules/", "../spec-format/", "../review/", "../prompts/lint/", "../prompts/changes/"):
        assert f'href="{href}"' in nav, href
    count, broken = broken_links(tmp_path / "site")
    assert broken == []


def test_prompt_text_is_exact_in_the_built_html(embedded):
    site_dir, result = embedded
    checked = 0
    for v in result.variants:
        shown = sections_in(variant_html(site_dir, v.slug))
        assert shown == expected_sections(result, v), v.id
        checked += len(shown)
    assert checked > 88 * 5


def test_markers_are_visible_text_not_tags(embedded):
    site_dir, result = embedded
    page = variant_html(site_dir, result.variants[0].slug)
    assert "&lt;environment_context&gt;" in page
    assert "&lt;/INSTRUCTIONS&gt;" in page
    assert "<environment_context>" not in page
    assert "</INSTRUCTIONS>" not in page


def test_json_download_is_the_responses_payload(embedded):
    site_dir, result = embedded
    from promptspec.assemble import export

    for req in result.requests[:5]:
        data = (site_dir / "prompts" / "variants" / f"{req.variant.slug}.json").read_text(encoding="utf-8")
        assert data == export.dumps(export.responses_payload(req))
        page = variant_html(site_dir, req.variant.slug)
        assert f'href="../{req.variant.slug}.json"' in page


def test_every_internal_link_resolves(embedded):
    count, broken = broken_links(embedded[0])
    assert count > 1000
    assert broken == []


def test_links_resolve_without_directory_urls(tmp_path):
    config = mkdocs_config(tmp_path, TEMPLATES)
    data = yaml.safe_load(config.read_text())
    data["use_directory_urls"] = False
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    site_dir = build_ok(config)
    assert (site_dir / "prompts" / "variants" / "harbor-5--default--default--read-only.html").is_file()
    count, broken = broken_links(site_dir)
    assert count > 1000
    assert broken == []


def test_matrix_links_every_variant_and_ranges(embedded):
    site_dir, result = embedded
    page = (site_dir / "prompts" / "index.html").read_text(encoding="utf-8")
    for v in result.variants:
        assert f'href="variants/{v.slug}/"' in page
    # Excluded cells (legacy model has no pair_programming) are shown as such.
    assert page.count("excluded by the matrix rules") == 8
    totals = [m.total for m in result.measures]
    # Ranges, never sums: variants are never sent together.
    assert f"{min(totals):,}–{max(totals):,}" in page
    assert f"{sum(totals):,}" not in page and "Σ" not in page


def test_nav_lists_only_overview_pages(embedded):
    site_dir, result = embedded
    page = variant_html(site_dir, result.variants[0].slug)
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>\s*</div>', page, re.S).group(0)
    hrefs = re.findall(r'href="([^"]*)"', nav)
    # Home, then the ten overview pages; no variant, value, fragment or tool page.
    assert hrefs[-10:] == [
        "../../", "../../explorer/", "../../models/", "../../personalities/", "../../modes/", "../../fragments/",
        "../../tools/", "../../assembly/", "../../lint/", "../../changes/",
    ]
    assert len(hrefs) <= 14


def test_search_index_keeps_titles_but_not_prompt_text(embedded):
    site_dir, result = embedded
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    docs = index["docs"]
    locations = {d["location"] for d in docs}
    text = "\n".join(d["title"] + "\n" + d["text"] for d in docs)
    # Fragment, model and overview pages are found; variant pages are not
    # indexed (the explorer's text search finds prompt text)...
    assert "prompts/fragments/review_checklist/" in locations
    assert "prompts/models/harbor-5/" in locations
    assert "prompts/" in locations and "prompts/explorer/" in locations
    assert not any(loc.startswith("prompts/variants/") for loc in locations)
    # ...and prompt text is not: lines only ever seen inside sections
    # (each still in some assembled prompt, so the check stays about something).
    sent = "\n".join(s.text for req in result.requests for _, _, s in req.sections) + "".join(req.base.text for req in result.requests)
    for needle in (
        "Stop and report instead of continuing",
        "Before you propose a plan, check",
        "You are Harbor, a coding agent",
    ):
        assert needle in sent, f"{needle!r} is in no prompt any more: pick another line of templates/"
        assert needle not in text


def test_figure_tables_stay_out_of_the_index_and_out_of_its_parse(embedded):
    """A table of figures is not searchable (its headers are in no entry,
    the prose around it is); the indexer read each indexed page emptied of
    its excluded elements (html.search_input), and read it as it would the
    whole page: the same sections, from a fraction of the markup."""
    from promptspec.site.serve.search_input import for_index

    site_dir, _ = embedded
    docs = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    text = "\n".join(d["title"] + "\n" + d["text"] for d in docs)
    for header in ("vs smallest", "distinct texts", "% usable"):  # in tables of figures only
        assert header not in text
    assert "Each row pairs a variant with the one that differs only in" in text and "Parts that differ" in text

    pages = sorted({d["location"].split("#")[0] for d in docs})
    whole = emptied = 0
    sizes = {}
    for location in pages:
        page = (site_dir / location / "index.html").read_text(encoding="utf-8")
        article = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', page, re.S).group(1)
        read = for_index(article)
        assert search_sections(read) == search_sections(article), location
        whole, emptied = whole + len(article), emptied + len(read)
        sizes[location] = (len(read), len(article))
    assert sizes["prompts/models/harbor-5/"][0] < sizes["prompts/models/harbor-5/"][1] / 3  # mostly its tables
    assert len(pages) > 40 and emptied < whole * 0.8, (len(pages), emptied, whole)


def test_titles_placement_percent_and_fragment_variants(embedded):
    site_dir, result = embedded
    read = lambda *p: (site_dir.joinpath(*p) / "index.html").read_text(encoding="utf-8")  # noqa: E731
    assert "<title>skills · fragment - promptspec</title>" in read("prompts", "fragments", "skills")
    assert "<title>harbor-5 · model - promptspec</title>" in read("prompts", "models", "harbor-5")
    totals = sorted(m.total for m in result.measures)
    largest = next(v for v in result.variants if result.measure_of(v).total == totals[-1])
    page = read("prompts", "variants", largest.slug)
    assert "<title>" + " · ".join(x for _, x in largest.values) + " · variant - promptspec</title>" in page
    # Where it ranks is filled in by the page's script from the totals file (test_browser.py
    # holds the script to the sentence the pages held before); the page itself holds only its own total.
    assert f'<p class="ps-place" data-total="{totals[-1]}" data-src="../../explorer/totals.json">' in page
    assert f"In the matrix of {len(totals)} variants.</p>" in page
    assert json.loads((site_dir / "prompts" / "explorer" / "totals.json").read_text(encoding="utf-8")) == {"totals": totals}
    # One percent format (two decimals) on every page kind.
    m = result.measure_of(largest)
    assert f"{m.percent_of_usable:.2f}% of " in page
    assert f"{m.percent_of_usable:.2f}%" in (site_dir / "prompts" / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"(?<![\d.:])\d+\.\d{3}%", page)  # (bar widths in style="width:..." are not shown)
    # The fragment page lists each rendering's variants, with their tokens, outside the collapsed text.
    frag = read("prompts", "fragments", "collaboration_mode")
    uses = [(r.variant, result.measure_of(r.variant).sections[i][j]) for r in result.requests
            for i, msg in enumerate(r.messages) for j, sec in enumerate(msg.sections) if sec.fragment == "collaboration_mode"]
    listed = re.findall(r'<p class="ps-variants">(.*?)</p>', frag, re.S)
    shown = re.findall(r'<a href="[^"]*">([^<]*(?:<wbr>[^<]*)*)</a> <span class="ps-dim">([\d,]+)</span>', "".join(listed))
    assert sorted((vid.replace("<wbr>", ""), int(t.replace(",", ""))) for vid, t in shown) == sorted((v.id, t) for v, t in uses)
    assert all("<details" not in part for part in listed)


def test_404_page_has_no_root_absolute_links_without_site_url(embedded):
    site_dir, _ = embedded
    page = (site_dir / "404.html").read_text(encoding="utf-8")
    assert not re.search(r'(?:href|src)="/(?!/)', page)
    assert 'href="assets/promptspec/promptspec.css"' in page


def test_variant_page_parts(embedded):
    site_dir, result = embedded
    v = next(v for v in result.variants if v.id == "harbor-5/friendly/plan/workspace-write")
    page = variant_html(site_dir, v.slug)
    m = result.measure_of(v)
    # Facts, rule, bar widths summing to 100%, a diagram, links to siblings.
    assert "personality_friendly" in page
    widths = [float(w) for w in re.findall(r'class="ps-seg [^"]*" style="width:([0-9.]+)%"', page)]
    assert m.request.tools  # the tool list is one more segment (it has a table, not a <details>)
    assert len(widths) == 1 + sum(len(s) for s in m.sections) + 1
    assert abs(sum(widths) - 100) < 0.01
    assert page.count('<figure class="ps-flow"') == 1 and not MERMAID_RE.findall(page)  # drawn offline
    assert "In the matrix of " in page
    assert page.count('<details class="ps-section') == len(widths) - 1  # the tools segment has no section
    assert 'href="../harbor-5--pragmatic--plan--workspace-write/"' in page
    assert 'href="../harbor-5--friendly--execute--workspace-write/"' in page
    assert 'href="../harbor-5-mini--friendly--plan--workspace-write/"' in page


def test_axis_and_fragment_pages(embedded):
    site_dir, result = embedded
    mode = (site_dir / "prompts" / "modes" / "plan" / "index.html").read_text(encoding="utf-8")
    # Plan vs default: the review checklist only exists in plan, collaboration_mode text differs.
    assert "plan vs default" in mode
    assert "+review_<wbr>checklist" in mode  # a break opportunity after "_", never mid-word
    assert "collaboration_<wbr>mode" in mode
    frag = (site_dir / "prompts" / "fragments" / "review_checklist" / "index.html").read_text(encoding="utf-8")
    uses = [v for v in result.variants if v.mode == "plan"]
    assert f"{len(uses)} of {len(result.variants)} variants" in frag
    assert "code-quality" in frag  # owner
    assert "fragments/review_checklist.md" in frag
    assembly = (site_dir / "prompts" / "assembly" / "index.html").read_text(encoding="utf-8")
    figure = re.search(r'<figure class="ps-flow".*?</figure>', assembly, re.S).group(0).replace("<wbr>", "")
    for f in result.spec.fragments:
        if not f.later:  # later-turn texts have no slot in a first request (see the conversation pages)
            assert f">{f.name}</a>" in figure  # each fragment, linked to its page
    later = [f.name for f in result.spec.fragments if f.later]
    assert later and all((site_dir / "prompts" / "fragments" / name / "index.html").is_file() for name in later)


# ---------------------------------------------------------------------------
# escaping


def _mermaid_lines_are_safe(diagram: str) -> None:
    allowed = [
        r"flowchart (LR|TB)",
        r'\s*n\d+\["[^"]*"\]:::\w+',
        r'\s*(base|s\d+)\["[^"]*"\]:::\w+',
        r'\s*t0\["[^"]*"\]:::tools',
        r"\s*n0 -\.- t0",
        r'\s*subgraph \w+\["[^"]*"\]',
        r"\s*direction TB",
        r"\s*end",
        r"\s*\w+( --> \w+)+",
        r"\s*classDef \w+ [a-z:#0-9,\- ]+",
    ]
    for line in diagram.splitlines():
        assert any(re.fullmatch(p, line) for p in allowed), line
        assert not re.search(r"#[0-9a-f]{3,6};", line) or "[" in line  # styles never look like entities


def test_mermaid_label_escaping():
    raw = HOSTILE_MARKER + "\n<b>x</b> & ; #quot; 😀"
    out = mermaid.text(raw)
    assert '"' not in out and "<" not in out and ">" not in out and "`" not in out
    assert "\n" not in out
    assert ";" not in out.replace("#", "\x00").split("\x00")[0]
    # Every ; closes one of our entity codes.
    assert re.fullmatch(r"([^#;]|#\d+;)*", out)
    assert "😀" in out


def test_markdown_escapes_for_headings():
    assert md_inline("a_b *c* [d](e) <f> `g` | h") == "a&#95;b &#42;c&#42; &#91;d&#93;&#40;e&#41; &#60;f&#62; &#96;g&#96; &#124; h"


@pytest.mark.parametrize("text", [
    HOSTILE_BODY,
    "\n\nleading blank lines",
    "   \n\t\n",
    "&amp;&#96;{{x}}{%y%}",
    "no newline at end",
    "carriage\rreturn\r\n",
])
def test_prompt_text_survives_python_markdown(text):
    """The same extensions as mkdocs.yml, on a raw block holding the text."""
    import markdown
    from pymdownx.superfences import fence_code_format

    md = markdown.Markdown(
        extensions=["attr_list", "md_in_html", "tables", "admonition", "toc", "pymdownx.details", "pymdownx.superfences"],
        extension_configs={"pymdownx.superfences": {"custom_fences": [{"name": "mermaid", "class": "mermaid", "format": fence_code_format}]}},
    )
    out = md.convert(f'# x\n\n<div class="ps-prompt-part" data-search-exclude="">\n{pre(text, attrs={"data-ps-section": "t"})}\n</div>\n\nafter\n')
    assert sections_in(out) == {"t": text}
    assert "\t" not in prompt_html(text) and "`" not in prompt_html(text)


def test_hostile_spec_builds_strict_and_shows_text_exactly(hostile):
    site_dir, result = hostile
    v = next(v for v in result.variants if v.model == "harbor-5")
    shown = sections_in(variant_html(site_dir, v.slug))
    assert shown == expected_sections(result, v)
    body = HOSTILE_BODY.replace("{% raw %}", "").replace("{% endraw %}", "")
    assert body in "".join(shown.values())


def test_hostile_strings_never_become_markup(hostile):
    site_dir, result = hostile
    pages = {p: p.read_text(encoding="utf-8") for p in site_dir.rglob("*.html")}
    for path, text in pages.items():
        assert "<script>alert(1)</script>" not in text, path
        assert "<img src=x" not in text, path
        assert "<b>owner</b>" not in text, path
        assert "<i>*x*</i>" not in text, path
        assert "<hostile" not in text, path
    model = pages[site_dir / "prompts" / "models" / "harbor-5" / "index.html"]
    brackets = {ord("["): "&#91;", ord("]"): "&#93;", ord("\n"): "&#10;"}  # markup.h: no Markdown link can form
    assert html.escape(HOSTILE_DISPLAY).translate(brackets) in model
    frag = pages[site_dir / "prompts" / "fragments" / "hostile" / "index.html"]
    assert html.escape(HOSTILE_DESCRIPTION).replace("{", "&#123;").replace("}", "&#125;").replace("`", "&#96;").translate(brackets) in frag
    assert html.escape(json.dumps(HOSTILE_MARKER + "\n")).replace("`", "&#96;").translate(brackets) in frag


def test_hostile_marker_stays_inside_its_mermaid_label(hostile):
    """For sites that opt into Mermaid: a spec string cannot end a label."""
    from promptspec.site.html import mermaid

    _, result = hostile
    v = next(v for v in result.variants if v.model == "harbor-5")
    diagram = mermaid.ordering(next(r for r in result.requests if r.variant == v), result.measure_of(v))
    _mermaid_lines_are_safe(diagram)
    assert "click" in diagram  # as label text...
    assert not any(line.strip().startswith("click") for line in diagram.splitlines())  # ...never a statement
    by_slot: dict[str, list[str]] = {}
    for f in result.spec.fragments:
        by_slot.setdefault(f.slot, []).append(f.name)
    _mermaid_lines_are_safe(mermaid.assembly(result.spec, by_slot))


def test_hostile_marker_is_text_in_the_drawn_diagram(hostile):
    site_dir, result = hostile
    v = next(v for v in result.variants if v.model == "harbor-5")
    figure = re.search(r'<figure class="ps-flow".*?</figure>', variant_html(site_dir, v.slug), re.S).group(0)
    assert "<b>" not in figure and "<script" not in figure
    assert HOSTILE_MARKER[:20] in html.unescape(figure)  # shown as text, whatever entities spell it


def test_json_download_escapes_nothing_it_should_not(hostile):
    site_dir, result = hostile
    v = next(v for v in result.variants if v.model == "harbor-5")
    data = json.loads((site_dir / "prompts" / "variants" / f"{v.slug}.json").read_text(encoding="utf-8"))
    texts = [part["text"] for msg in data["input"] for part in msg["content"]]
    assert any(HOSTILE_MARKER in t for t in texts)


# ---------------------------------------------------------------------------
# determinism


def test_two_builds_are_byte_identical(tmp_path):
    a = cli("--cache-dir", str(tmp_path / "c1"), "build", "--out", str(tmp_path / "a"))
    b = cli("--cache-dir", str(tmp_path / "c2"), "build", "--out", str(tmp_path / "b"))
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    da, db = tree_digest(tmp_path / "a"), tree_digest(tmp_path / "b")
    assert da == db
    assert sum(1 for k in da if k.startswith("prompts/variants/") and k.endswith(".json")) == 88
    assert "prompts/explorer/explorer-data.json" in da


def test_two_mkdocs_builds_give_identical_pages(embedded, tmp_path):
    site_a, _ = embedded
    site_b = build_ok(mkdocs_config(tmp_path, TEMPLATES))
    pa, pb = tree_digest(site_a / "prompts"), tree_digest(site_b / "prompts")
    assert pa == pb


def test_site_pages_do_not_depend_on_the_token_cache(tmp_path):
    r1 = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "x"))
    r2 = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "x"))  # warm cache
    assert site.build_site(r1, links="dir") == site.build_site(r2, links="dir")


# ---------------------------------------------------------------------------
# promptspec build --out


def test_build_out_writes_folder_and_keeps_it_when_spec_breaks(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    out = tmp_path / "out"
    proc = cli("build", "--spec", str(spec), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "prompts" / "index.md").is_file()
    assert (out / "assets" / "promptspec" / "promptspec.css").is_file()
    assert len(list((out / "prompts" / "variants").glob("*.json"))) == 88
    # Links between the .md files resolve in the folder itself.
    index = (out / "prompts" / "index.md").read_text()
    for href in re.findall(r'href="([^"#]+)"', index):
        assert (out / "prompts" / href).exists(), href
    before = tree_digest(out)

    break_spec(spec)
    proc = cli("build", "--spec", str(spec), "--out", str(out))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptspec: error: fragments/apps.yaml:")
    assert tree_digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "spec"]  # no temp folders left


def test_build_out_replaces_its_own_output_only(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    proc = cli("build", "--out", str(out))
    assert proc.returncode == 2
    assert "not written by 'promptspec build'" in proc.stderr
    assert (out / "precious.txt").read_text() == "keep me"
    out2 = tmp_path / "out2"
    assert cli("build", "--out", str(out2)).returncode == 0
    (out2 / "prompts" / "stale.md").write_text("old")
    assert cli("build", "--out", str(out2)).returncode == 0
    assert not (out2 / "prompts" / "stale.md").exists()


# ---------------------------------------------------------------------------
# the plugin's error handling


def test_mkdocs_build_stops_with_the_cli_message(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    break_spec(spec)
    expected = cli("list", "--spec", str(spec)).stderr.strip()
    assert expected.startswith("promptspec: error: fragments/apps.yaml:")
    proc = mkdocs_build(mkdocs_config(tmp_path, spec))
    assert proc.returncode != 0
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr


def test_mkdocs_serve_rebuilds_on_spec_edits_and_keeps_last_good_pages(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    config = mkdocs_config(tmp_path, spec)
    with mkdocs_serve(config, tmp_path / "serve.log") as server:
        base = f"{server}/prompts/fragments/review_checklist/"
        poll(base, lambda b: "Before you propose a plan" in b)
        # An edit to a fragment template shows up after the rebuild.
        body_file = spec / "fragments" / "review_checklist.md"
        body_file.write_text(body_file.read_text().replace("Before you propose a plan", "Edited while serving"))
        poll(base, lambda b: "Edited while serving" in b)
        # A broken spec: the last good page stays, with the error on it.
        break_spec(spec)
        page = poll(base, lambda b: "ps-error" in b)
        assert "Edited while serving" in page
        assert "fragments/apps.yaml" in page
        assert "promptspec: error: fragments/apps.yaml:" in (tmp_path / "serve.log").read_text()
        # Fixed: the banner goes away.
        shutil.copy(TEMPLATES / "fragments" / "apps.yaml", spec / "fragments" / "apps.yaml")
        poll(base, lambda b: "ps-error" not in b and "Edited while serving" in b)
    # The spec was watched natively (site/serve/native_watch.py) where the
    # platform has a native observer that could start, and by nothing else:
    # MkDocs' poll of it as well would have rebuilt each edit a second time,
    # and a build's reads of the spec would rebuild for ever.
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    log = (tmp_path / "serve.log").read_text()
    said = [line for line in log.splitlines() if "through the system's change notifications" in line]
    if not issubclass(Observer, PollingObserver) and "watching the spec by polling" not in log:
        assert len(said) == 1 and (f"'{spec}'" in said[0] or f"'{os.path.relpath(spec)}'" in said[0]), log
    assert log.count("Detected file changes") == 3, log


def test_mkdocs_serve_with_a_broken_spec_from_the_start(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    break_spec(spec)
    with mkdocs_serve(mkdocs_config(tmp_path, spec), tmp_path / "serve.log") as server:
        url = f"{server}/prompts/"
        page = poll(url, lambda b: "could not be built" in b)
        assert "fragments/apps.yaml" in page and "ps-error" in page
        shutil.copy(TEMPLATES / "fragments" / "apps.yaml", spec / "fragments" / "apps.yaml")
        poll(url, lambda b: "ps-error" not in b and "ps-matrix" in b)


# ---------------------------------------------------------------------------
# links and paths


def test_relative_links_for_each_url_style():
    v = "prompts/variants/a--b--c.md"
    assert relative(v, "prompts/fragments/x.md", "md") == "../fragments/x.md"
    assert relative(v, "prompts/fragments/x.md", "dir") == "../../fragments/x/"
    assert relative(v, "prompts/fragments/x.md", "html") == "../fragments/x.html"
    assert relative(v, "prompts/index.md", "dir") == "../../"
    assert relative("prompts/index.md", "prompts/variants/a.json", "dir") == "variants/a.json"
    assert relative(v, v, "dir", "s-1") == "./#s-1"


def test_reserved_names_do_not_collide_with_overview_pages():
    p = Paths("prompts")
    assert p.fragment_page("index") == "prompts/fragments/_index.md"
    assert p.fragment_page("README") == "prompts/fragments/_README.md"
    assert p.axis_page("model", "Index") == "prompts/models/_Index.md"


@pytest.mark.parametrize("bad", ["", "/abs", "../up", "a/../b", "a//b"])
def test_pages_folder_must_stay_inside(bad):
    from promptspec.errors import UsageError

    with pytest.raises(UsageError):
        Paths(bad)


# ---------------------------------------------------------------------------
# Codex fixture


def test_codex_fixture_site_builds_strict(tmp_path):
    fixture = SHARED / "fixtures" / "codex"
    require_shared(fixture)
    out = tmp_path / "codex-spec"
    proc = cli("import-codex", str(fixture), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    site_dir = build_ok(mkdocs_config(tmp_path, out))
    result = pipeline.run(out, counter=TokenCounter(tmp_path / "cache"))
    assert result.variants
    v = result.variants[0]
    assert sections_in(variant_html(site_dir, v.slug)) == expected_sections(result, v)


def test_assembly_diagrams_leave_out_a_group_with_no_slots() -> None:
    """An imported spec's layout may name a message group with no slots; it
    sends nothing, so neither diagram draws an empty "(no slots)" box for it."""
    import dataclasses

    from promptspec.site.html import diagram
    from promptspec.site.html import mermaid
    from promptspec.spec import load_spec

    spec = load_spec(TEMPLATES)
    layout = dict(spec.layout)
    assert layout and all(layout.values()), "the example's groups all have slots"
    layout["separate_developer"] = ()
    bare = dataclasses.replace(spec, layout=layout)
    for drawn in (diagram.assembly(bare, {}), mermaid.assembly(bare, {})):
        assert "(no slots)" not in drawn
        assert "slot " in drawn  # the other groups are still drawn
