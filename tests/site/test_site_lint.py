"""Lint findings and live examples on the site.

Real `mkdocs build --strict` runs (the helpers of test_site.py) of a copy of
the embedded spec with one extra fragment that declares a variable it never
uses (PS202), with a tmp docs folder holding a small lint rules page and a
hand-written page with example markers.
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.authoring import lint
from promptspec.site import build as site
from promptspec.authoring.findings import RULES
from promptspec.measure.counter import TokenCounter

from _helpers import TEMPLATES, break_spec, broken_links, build_ok, mkdocs_build, mkdocs_config, mkdocs_serve, poll

NOTES = {
    "description": "Notes for the <b>reviewer</b> & co",
    "owner": "docs-team",
    "role": "developer",
    "slot": "developer_extensions",
    "start": "<review_notes>",
    "end": "</review_notes>",
    "text": "\nKeep notes short & <plain>.\n",
    "variables": {"leftover_name": 1},
}
LINT_RULES_PAGE = "# Lint rules\n\n" + "".join(
    f'<a id="{r.anchor}"></a>\n\n## {r.id} {r.name}\n\n{r.summary}\n\n' for r in RULES.values()
)
EXAMPLES_PAGE = (
    "# Examples\n\n"
    "The notes section, as sent:\n\n"
    "<!-- promptspec:example fragment=review_notes -->\n\n"
    "And the syntax itself, in a fence:\n\n"
    "```markdown\n<!-- promptspec:example fragment=no_such_fragment -->\n```\n"
)


def notes_spec(root: Path) -> Path:
    spec = root / "spec"
    shutil.copytree(TEMPLATES, spec)
    (spec / "fragments" / "review_notes.yaml").write_text(yaml.safe_dump(NOTES, sort_keys=False), encoding="utf-8")
    return spec


def with_docs(config: Path, pages: dict[str, str]) -> Path:
    docs = config.parent / "docs"
    for rel, text in pages.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    return config


def set_option(config: Path, key: str, value) -> Path:
    data = yaml.safe_load(config.read_text())
    data[key] = value
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    return config


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The notes spec built twice: directory URLs and .html URLs."""
    tmp = tmp_path_factory.mktemp("site-lint")
    spec = notes_spec(tmp)
    pages = {"guide/lint-rules.md": LINT_RULES_PAGE, "examples.md": EXAMPLES_PAGE}
    site_dir = build_ok(with_docs(mkdocs_config(tmp / "dir", spec), pages))
    html_config = with_docs(mkdocs_config(tmp / "html", spec), pages)
    html_dir = build_ok(set_option(html_config, "use_directory_urls", False))
    result = pipeline.run(spec, counter=TokenCounter(tmp / "cache"))
    return site_dir, html_dir, result


def test_the_spec_has_exactly_the_planted_finding(built):
    _, _, result = built
    findings = lint.lint(result)
    assert [(f.rule, f.fragment) for f in findings] == [("PS202", "review_notes")]


def test_fragment_page_shows_its_finding_linked_to_the_rule(built):
    site_dir, _, result = built
    (finding,) = lint.lint(result)
    page = (site_dir / "prompts" / "fragments" / "review_notes" / "index.html").read_text(encoding="utf-8")
    lint_part = page[page.index('id="lint-1"'):page.index('id="renderings')]
    assert 'href="../../../guide/lint-rules/#ps202"' in lint_part
    assert "<code>PS202</code>" in lint_part
    assert '<span class="ps-sev ps-sev-warning">warning</span>' in lint_part
    assert html.escape(finding.message) in lint_part
    assert "leftover_name" in lint_part
    assert f"<code>{html.escape(finding.location)}</code>" in lint_part.replace("<wbr>", "")
    # Spec strings stay text.
    assert "<b>reviewer</b>" not in page
    # A clean fragment says so.
    clean = (site_dir / "prompts" / "fragments" / "apps" / "index.html").read_text(encoding="utf-8")
    assert "No lint findings for this fragment" in clean
    assert "PS202" not in clean


def test_lint_page_lists_every_finding_and_is_in_the_nav(built):
    site_dir, _, result = built
    page = (site_dir / "prompts" / "lint" / "index.html").read_text(encoding="utf-8")
    assert "0 errors, 1 warning" in page
    assert 'href="../../guide/lint-rules/#ps202"' in page
    assert 'href="../fragments/review_notes/"' in page
    assert 'href="../../guide/lint-rules/"' in page  # the rules reference
    matrix = (site_dir / "prompts" / "index.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>\s*</div>', matrix, re.S).group(0)
    assert 'href="lint/"' in nav


def test_every_link_resolves_with_both_url_styles(built):
    site_dir, html_dir, _ = built
    for root in (site_dir, html_dir):
        count, broken = broken_links(root)
        assert count > 1000 and broken == []
    page = (html_dir / "prompts" / "fragments" / "review_notes.html").read_text(encoding="utf-8")
    assert 'href="../../guide/lint-rules.html#ps202"' in page
    assert 'id="ps202"' in (html_dir / "guide" / "lint-rules.html").read_text(encoding="utf-8")


def test_examples_in_handwritten_pages_render_from_the_spec(built):
    site_dir, _, result = built
    v = next(v for v in result.variants if any(s.fragment == "review_notes" for r in result.requests if r.variant == v for _, _, s in r.sections))
    req = next(r for r in result.requests if r.variant == v)
    text = next(s.text for _, _, s in req.sections if s.fragment == "review_notes")
    assert text == "<review_notes>\nKeep notes short & <plain>.\n</review_notes>"
    page = (site_dir / "examples" / "index.html").read_text(encoding="utf-8")
    assert html.escape(text) in page
    assert "<plain>" not in page
    assert "promptspec:example fragment=review_notes" not in page
    # The marker inside the fence is shown, not expanded (and not an error).
    assert "promptspec:example fragment=no_such_fragment" in page


def test_embedded_spec_lint_page_says_no_findings(tmp_path):
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path))
    pages = site.build_site(result, links="dir").pages
    assert "No findings" in pages["prompts/lint.md"]
    assert "lint" in result.timings  # timed next to load/assemble/count
    assert "No lint findings for this fragment" in pages["prompts/fragments/apps.md"]


def test_without_a_rules_page_rule_ids_are_not_links(tmp_path):
    result = pipeline.run(notes_spec(tmp_path), counter=TokenCounter(tmp_path / "cache"))
    pages = site.build_site(result, links="dir").pages
    page = pages["prompts/fragments/review_notes.md"]
    assert "<code>PS202</code>" in page
    assert "lint-rules" not in page
    linked = site.build_site(result, links="html", rules_page="guide/lint-rules.md").pages["prompts/fragments/review_notes.md"]
    assert 'href="../../guide/lint-rules.html#ps202"' in linked


def test_a_bad_marker_stops_mkdocs_build_with_one_line(tmp_path):
    config = with_docs(mkdocs_config(tmp_path, TEMPLATES), {"guide/bad.md": "# Bad\n\n<!-- promptspec:example fragment=apps part=middle -->\n"})
    proc = mkdocs_build(config)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "promptspec: error:" in line]
    assert len(lines) == 1, proc.stderr
    assert "promptspec: error: docs/guide/bad.md:3: unknown part 'middle'" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_guide_for_another_spec_builds_with_a_note(tmp_path):
    """The shipped guide names Harbor variants; pointed at a spec without
    them, `mkdocs build --strict` still succeeds and the page says what it
    cannot show."""
    page = "# Guide\n\n<!-- promptspec:layout variant=harbor-9/default/plan/workspace-write -->\n\n<!-- promptspec:layout -->\n"
    config = with_docs(mkdocs_config(tmp_path, TEMPLATES), {"guide/other.md": page})
    proc = mkdocs_build(config)
    assert proc.returncode == 0, proc.stderr
    assert "example not shown: docs/guide/other.md:3: unknown variant 'harbor-9/default/plan/workspace-write'" in proc.stderr
    built = (tmp_path / "site" / "guide" / "other" / "index.html").read_text(encoding="utf-8")
    assert built.count("ps-missing") == 1 and "promptspec-layout" in built


def test_serve_leaves_markers_alone_while_the_spec_is_broken(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    config = with_docs(mkdocs_config(tmp_path, spec), {
        "examples.md": "# Examples\n\n<!-- promptspec:example fragment=permissions part=body -->\n",
        "bad.md": "# Bad\n\n<!-- promptspec:example fragment=apps part=middle -->\n",
    })
    with mkdocs_serve(config, tmp_path / "serve.log") as server:
        url = f"{server}/examples/"
        page = poll(url, lambda b: "promptspec-example" in b)
        assert "ps-error" not in page
        # A bad marker under serve: reported on its page, the server stays up.
        bad = poll(f"{server}/bad/", lambda b: "ps-error" in b)
        assert "unknown part" in bad
        break_spec(spec)
        page = poll(url, lambda b: "ps-error" in b)
        assert "promptspec-example" not in page
        assert "<!-- promptspec:example fragment=permissions part=body -->" in page
        assert "fragments/apps.yaml" in page
        shutil.copy(TEMPLATES / "fragments" / "apps.yaml", spec / "fragments" / "apps.yaml")
        poll(url, lambda b: "ps-error" not in b and "promptspec-example" in b)
