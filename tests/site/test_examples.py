"""Live examples in the guide: markers expand to escaped text rendered from
the spec; bad markers fail naming the page and line; every page of docs/
expands against the embedded spec (so the guide cannot go stale)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import markdown
import pytest

from promptspec import pipeline
from promptspec.errors import SpecError
from promptspec.site.output.examples import expand_examples
from promptspec.measure.counter import TokenCounter

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
DOCS = ROOT / "docs"
VARIANT = "harbor-5/default/default/workspace-write"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Result:
    return pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path_factory.mktemp("tokens")))


def _pre_text(out: str) -> str:
    m = re.search(r"<pre><code>(.*?)</code></pre>", out, re.S)
    assert m, out
    return html.unescape(m.group(1))


def _section(result: pipeline.Result, fragment: str, variant: str):
    req = next(r for r in result.requests if r.variant.id == variant)
    return next(s for _, _, s in req.sections if s.fragment == fragment)


def test_example_is_the_exact_section_escaped(result: pipeline.Result) -> None:
    out = expand_examples(f"Intro\n<!-- promptspec:example fragment=environment_context variant={VARIANT} -->\nAfter\n", result)
    section = _section(result, "environment_context", VARIANT)
    assert _pre_text(out) == section.text
    assert "&lt;environment_context&gt;" in out and "<environment_context>" not in out
    assert out.startswith("Intro\n") and out.endswith("After\n")


def test_example_body_part_and_default_variant(result: pipeline.Result) -> None:
    out = expand_examples("<!-- promptspec:example fragment=review_checklist part=body -->\n", result)
    # review_checklist is sent in Plan mode only: the first variant that sends it.
    assert "harbor-5/default/plan/workspace-write" in out
    assert _pre_text(out) == _section(result, "review_checklist", "harbor-5/default/plan/workspace-write").body


def test_prompt_text_cannot_become_markup(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    (spec / "fragments" / "realtime.md").write_text("\n</code></pre><script>alert(1)</script> & done\n")
    res = pipeline.run(spec, counter=TokenCounter(tmp_path / "tokens"))
    out = expand_examples("<!-- promptspec:example fragment=realtime -->\n", res)
    assert "<script>" not in out and "&lt;script&gt;" in out and "&amp; done" in out
    assert out.count("</pre>") == 1
    page = markdown.markdown(out)
    assert "<script>" not in page


def test_layout_sections_source_rules_assembly(result: pipeline.Result) -> None:
    text = "\n".join(
        [
            "<!-- promptspec:layout variant=harbor-5/default/plan/workspace-write -->",
            "<!-- promptspec:sections variant=harbor-5--default--plan--workspace-write -->",
            '<!-- promptspec:source path="fragments/environment_context.yaml" -->',
            "<!-- promptspec:rules -->",
            "<!-- promptspec:assembly -->",
            "<!-- promptspec:ordering -->",
        ]
    )
    out = expand_examples(text + "\n", result)
    assert "00:message/developer[9]:" in out and "&lt;review_checklist&gt;" in out
    measure = next(m for m in result.measures if m.request.variant.id == "harbor-5/default/plan/workspace-write")
    assert f"({measure.total} tokens, {measure.encoding})" in out
    assert html.escape((TEMPLATES / "fragments" / "environment_context.yaml").read_text()) in out
    assert '<a href="#ps101">PS101</a>' in out
    assert out.count('<figure class="ps-flow"') == 2 and "```mermaid" not in out  # drawn offline by default
    assert "promptspec:" not in out
    mermaid = expand_examples("<!-- promptspec:assembly -->\n<!-- promptspec:ordering -->\n", result, diagrams="mermaid")
    assert mermaid.count("```mermaid") == 2 and "ps-flow" not in mermaid


@pytest.mark.parametrize(
    "marker, message",
    [
        ("<!-- promptspec:example fragment=nope -->", "unknown fragment &#x27;nope&#x27;"),
        ("<!-- promptspec:example fragment=apps variant=m/x/y -->", "unknown variant &#x27;m/x/y&#x27;"),
        ("<!-- promptspec:example fragment=review_checklist variant=harbor-5/default/default/workspace-write -->", "sends no section"),
        ("<!-- promptspec:layout variant=harbor-9/default/plan/workspace-write -->", "unknown variant"),
        ("<!-- promptspec:ordering variant=nope -->", "unknown variant"),
        ("<!-- promptspec:source path=nope.md -->", "unknown spec file &#x27;nope.md&#x27;"),
    ],
)
def test_markers_for_another_spec_become_a_note(result: pipeline.Result, marker: str, message: str) -> None:
    """A guide written for one spec still builds for another: what the spec
    lacks is a visible note (and a line in `missed`), the rest expands."""
    missed: list[str] = []
    out = expand_examples(f"# Title\n\n{marker}\n\n<!-- promptspec:layout -->\n", result, page="docs/guide/x.md", missed=missed)
    assert out.count('class="admonition note ps-missing"') == 1
    assert message in out
    assert "00:message/developer" in out  # the marker that does apply is expanded
    assert len(missed) == 1 and missed[0].startswith("docs/guide/x.md:3: ")


def test_markers_in_code_blocks_are_left_alone(result: pipeline.Result) -> None:
    text = "```markdown\n<!-- promptspec:example fragment=nope -->\n```\n\n~~~~\n<!-- promptspec:bogus -->\n~~~~\n"
    assert expand_examples(text, result) == text


def test_source_reads_do_not_count_as_use(result: pipeline.Result) -> None:
    before = set(result.spec.fs.read_paths)
    expand_examples("<!-- promptspec:source path=spec.yaml -->\n", result)
    assert set(result.spec.fs.read_paths) == before


@pytest.mark.parametrize(
    "marker, message",
    [
        ("<!-- promptspec:example fragment=apps part=middle -->", "unknown part 'middle'"),
        ("<!-- promptspec:example -->", "needs fragment=NAME"),
        ("<!-- promptspec:layout fragment=apps -->", "does not take 'fragment'"),
        ("<!-- promptspec:diagram -->", "unknown promptspec marker kind 'diagram'"),
        ("<!-- promptspec:source path=../README.md -->", "leaves the spec folder"),
        ("<!-- promptspec:example fragment=apps", "malformed promptspec marker"),
    ],
)
def test_bad_markers_name_the_page_and_line(result: pipeline.Result, marker: str, message: str) -> None:
    with pytest.raises(SpecError) as err:
        expand_examples(f"# Title\n\n{marker}\n", result, page="docs/guide/x.md")
    assert err.value.location() == "docs/guide/x.md:3"
    assert message in str(err.value)


def test_every_docs_page_expands(result: pipeline.Result) -> None:
    pages = sorted(DOCS.rglob("*.md"))
    assert pages
    expanded = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        out = expand_examples(text, result, page=page.relative_to(ROOT).as_posix())
        expanded += out != text
        markdown.markdown(out, extensions=["tables", "fenced_code"])
    assert expanded >= 3  # the guide pages use markers


def test_spec_format_reference_covers_every_key() -> None:
    from promptspec import spec as spec_module
    from promptspec.spec.model import BUILTIN_NAMES

    doc = (DOCS / "spec-format.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (\w+)$", doc, re.M))
    assert spec_module.SPEC_KEYS <= headings, spec_module.SPEC_KEYS - headings
    for key in (
        *spec_module.FRAGMENT_KEYS,
        *(spec_module.MODEL_KEYS - {"model_messages"}),
        "instructions_template", "instructions_variables",
        "tree", "project_root", "user_instructions", "max_bytes", "fallback_filenames",
        "encodings", "fragment_budget", "max_output_chars", "max_iterations", "max_seconds",
        *spec_module.ENGINES, *BUILTIN_NAMES, "text(", "codex_join(",
        *(slot for slots in spec_module.DEFAULT_LAYOUT.values() for slot in slots),
    ):
        assert f"`{key}" in doc, key
