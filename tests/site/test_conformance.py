"""The Conformance page and badges, from a stored `verify --out` report: the
site reads the report, never the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptspec import pipeline
from promptspec.errors import SpecError
from promptspec.measure.counter import TokenCounter
from promptspec.site import build as site
from promptspec.site.pages import conformance

from _helpers import TEMPLATES, build_ok, mkdocs_config


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path_factory.mktemp("tokens")))


def _report(path: Path, result, differ: int = 1) -> Path:
    """A report for the embedded spec's first variants (our own data: the shape `verify --out` writes)."""
    vs = result.variants[:3]
    variants = [{"id": v.id, "config": {}, "identical": i >= differ, "refused": None,
                 "part": None if i >= differ else "input[0] developer part 1 (permissions)",
                 "diff": None if i >= differ else "-codex <b>bold</b>\n+promptspec <script>x</script>"}
                for i, v in enumerate(vs)]
    data = {"kind": "promptspec-verify-report", "version": 1, "codex_release": "0.125.0", "spec": "x",
            "date": "2026-12-01", "matrix_size": len(result.variants), "compared": len(vs),
            "identical": len(vs) - differ, "not_modelled": ["tools"], "variants": variants}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_page_and_badges(result, tmp_path):
    c = conformance.load(_report(tmp_path / "r.json", result))
    pages = site.build_site(result, links="dir", variant_pages="all", conformance=c).pages
    page = pages["prompts/conformance.md"]
    assert "<strong>2 of 3</strong>" in page and "0.125.0" in page and "Not modelled, so not compared: tools" in page
    assert "&lt;script&gt;" in page and "<script>" not in page  # prompt text and diffs are data
    first, second = result.variants[0], result.variants[1]
    differs = pages[f"prompts/variants/{first.slug}.md"]
    assert "ps-badge-differs" in differs and "differs from Codex 0.125.0" in differs
    assert "identical to Codex 0.125.0" in pages[f"prompts/variants/{second.slug}.md"]
    assert "ps-badge-identical" not in pages[f"prompts/variants/{result.variants[5].slug}.md"]  # not compared: no badge


def test_no_report_no_page(result):
    assert "prompts/conformance.md" not in site.build_site(result, links="dir").pages


@pytest.mark.parametrize("text, message", [
    ("{", "not a promptspec verify report"),
    ('{"kind": "something-else"}', "not a promptspec verify report"),
    ('{"kind": "promptspec-verify-report", "variants": []}', "not a promptspec verify report"),
])
def test_bad_report_is_one_line(tmp_path, text, message):
    p = tmp_path / "r.json"
    p.write_text(text)
    with pytest.raises(SpecError, match=message) as err:
        conformance.load(p)
    assert "\n" not in err.value.oneline()
    with pytest.raises(SpecError, match="not found"):
        conformance.load(tmp_path / "missing.json")


def test_mkdocs_builds_the_page_from_the_option(result, tmp_path):
    report = _report(tmp_path / "conformance.json", result, differ=0)
    out = build_ok(mkdocs_config(tmp_path, TEMPLATES, conformance=str(report)))
    html = (out / "prompts" / "conformance" / "index.html").read_text()
    assert "3 of 3" in html and "No compared variant differs" in html


def test_build_out_writes_the_page_from_the_option(result, tmp_path):
    """`promptspec build --out --conformance FILE`: the page and badges the
    plugin option gives, for a site built without MkDocs."""
    from _helpers import cli

    report = _report(tmp_path / "conformance.json", result)
    proc = cli("build", "--out", str(tmp_path / "out"), "--conformance", str(report))
    assert proc.returncode == 0, proc.stderr
    pages = site.build_site(result, conformance=conformance.load(report)).pages
    assert (tmp_path / "out" / "prompts" / "conformance.md").read_text(encoding="utf-8") == pages["prompts/conformance.md"]
    badged = f"prompts/variants/{result.variants[0].slug}.md"
    assert "differs from Codex 0.125.0" in (tmp_path / "out" / badged).read_text(encoding="utf-8")
    missing = cli("build", "--out", str(tmp_path / "none"), "--conformance", str(tmp_path / "missing.json"))
    assert missing.returncode != 0 and "verify report not found" in missing.stderr and not (tmp_path / "none").exists()
