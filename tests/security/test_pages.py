"""F5, F7, F8, F9, F13: what the outputs may cost and contain.  The site is
linear in the number of values, a text diff has a budget, `build --out`
Markdown is inert in any CommonMark renderer, templates cannot print
addresses, and a failed `mkdocs build` keeps the previous site."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from _attack import cli, one_error_line, run_main, small_spec
from required import require_module
from promptspec.spec.readers.load import load_spec


def _models(n: int) -> list[dict]:
    return [{"slug": f"m{i}", "context_window": 1000, "base_instructions": "x" * (i % 7) + "\n"} for i in range(n)]


def _site_bytes(out: Path) -> int:
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


def test_site_size_is_linear_in_the_number_of_models(tmp_path: Path) -> None:
    """F5: each model page compared with every other model (2,000 models: 3.4 GB)."""
    sizes = {}
    for n in (20, 40):
        spec = small_spec(tmp_path / f"s{n}", models=_models(n))
        out = tmp_path / f"out{n}"
        proc = cli("build", "--spec", str(spec), "--out", str(out), "--base", "none")
        assert proc.returncode == 0, proc.stderr
        sizes[n] = _site_bytes(out)
        page = (out / "prompts" / "models" / "m10.md").read_text()
        assert len(re.findall(r"^### ", page, re.M)) <= 12  # compared with the nearest values only
    assert sizes[40] / sizes[20] < 2.6, sizes  # quadratic would be ~4


def test_model_lookup_is_a_dict(tmp_path: Path) -> None:
    spec = load_spec(small_spec(tmp_path / "s", models=_models(50)))
    assert spec.model("m49").slug == "m49"
    assert spec.memo["lookup:model"]["m7"] is spec.models[7]
    with pytest.raises(KeyError):
        spec.model("nope")


def test_huge_text_diff_falls_back_to_a_summary(tmp_path: Path) -> None:
    """F7: a 47 KB fragment edit took 25 s in difflib (x8 per doubling)."""
    base = small_spec(tmp_path / "base", files={"fragments/greeting.md": "".join(f"v{i % 101}\n" for i in range(12000))})
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / "fragments" / "greeting.md").write_text("".join(f"v{(i * 7) % 101}\n" for i in range(12000)))
    proc = cli("diff", str(base), str(head), "--format", "json", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "too many changed lines to diff line by line" in proc.stdout


P = "\n\n[CLICKME](javascript:window.__pwn=1)\n\n# HEAD *em* _u_\n\n    indented code\n\n- item\n\n<img src=x onerror=alert(1)>\n"


def test_build_out_markdown_is_inert_in_commonmark(tmp_path: Path) -> None:
    """F8: under marked (Docsify) every blank line ended the raw HTML block and a
    hostile `[x](javascript:...)` became a live link."""
    markdown_it = require_module("markdown_it", "markdown-it-py is in the test extras")
    spec = small_spec(
        tmp_path / "s",
        spec={"name": "S" + P, "personalities": {"default": {"description": "p" + P}}, "modes": {"default": {"description": "m" + P}},
              "scenario": {"who": "w" + P}},
        models=[{"slug": "m1", "display_name": "M" + P, "description": "d" + P, "context_window": 1000, "base_instructions": "b" + P},
                {"slug": "m2", "context_window": 1000, "base_instructions": "c" + P}],
        fragments={"greeting": {"description": "f" + P, "role": "developer", "slot": "developer_extensions", "body": "greeting.md",
                                "start": "<g>", "end": "</g>", "owner": "o" + P.replace("\n", " ")}},
        files={"fragments/greeting.md": "{{ who }}\nbody" + P},
    )
    out = tmp_path / "out"
    assert cli("build", "--spec", str(spec), "--out", str(out), "--base", "none").returncode == 0
    md = markdown_it.MarkdownIt("commonmark")
    md.validateLink = lambda url: True  # like marked: whatever link forms is live
    pages = sorted(out.rglob("*.md"))
    assert len(pages) > 10
    for page in pages:
        html = md.render(page.read_text(encoding="utf-8"))
        assert 'href="javascript:' not in html, page
        assert not re.search(r"<h1>HEAD|<em>em|<li>item|<pre><code>indented|<img src=\"x", html), page
    variant = next(out.rglob("m1--default--default.md")).read_text()
    assert "CLICKME" in variant  # the text is there, as text


def test_build_out_diffs_are_inert_in_commonmark(tmp_path: Path) -> None:
    """F8 for diffs: a unified diff's context lines are spec text too.  A
    space-only context line ended the raw block in CommonMark: the next
    context line, " # HEAD", became a heading, and the block's end tags
    landed in a paragraph."""
    markdown_it = require_module("markdown_it", "markdown-it-py is in the test extras")
    text = "\n\n# HEAD *em* _u_\n\n- item\n"
    base = small_spec(tmp_path / "base", files={"fragments/greeting.md": "{{ who }}\nbody" + text})
    spec = small_spec(tmp_path / "s", files={"fragments/greeting.md": "{{ who }}\nbody, edited" + text})  # its lines are context
    out = tmp_path / "out"
    proc = cli("build", "--spec", str(spec), "--out", str(out), "--base", f"dir:{base}")
    assert proc.returncode == 0, proc.stderr
    md = markdown_it.MarkdownIt("commonmark")
    pages = [p for p in sorted(out.rglob("*.md")) if 'class="ps-udiff"' in p.read_text(encoding="utf-8")]
    assert pages  # the Changes page and the variant pages show the diff
    for page in pages:
        html = md.render(page.read_text(encoding="utf-8"))
        assert not re.search(r"<h1>HEAD|<em>em|<li>item|<p></code>", html), page
        assert "# HEAD *em* _u_" in html  # the text is there, as text


@pytest.mark.parametrize("source", ["{{ text }}", "{{ codex_join }}", "{{ range }}", "{{ text ~ '' }}", "{{ text|string }}",
                                    "{{ [text]|join }}", "{{ '%s' % range }}", "{{ [1]|map('string') }}", "{{ range|pprint }}"])
def test_templates_cannot_print_reprs_with_addresses(tmp_path: Path, capsys, source: str) -> None:
    """F9: `{{ text }}` printed `<bound method ... at 0x7f43...>`: every build differed."""
    spec = small_spec(tmp_path / "s", files={"fragments/greeting.md": source + "\n"})
    assert "cannot print" in one_error_line(run_main(capsys, "render", "--spec", str(spec)))


def test_plain_values_still_print_deterministically(tmp_path: Path) -> None:
    spec = small_spec(tmp_path / "s", files={"fragments/greeting.md": "{{ [1, 'a']|map('string')|list }} {{ {'k': [1, 2]} }} {{ range(3)|list }}\n"})
    first, second = (cli("render", "--spec", str(spec)) for _ in range(2))
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout and "['1', 'a'] {'k': [1, 2]} [0, 1, 2]" in first.stdout


def test_failed_mkdocs_build_keeps_the_previous_site(tmp_path: Path) -> None:
    """F13: MkDocs cleaned site_dir before the plugin loaded the spec (276 files -> 0)."""
    from _helpers import build_ok, mkdocs_build, mkdocs_config

    spec = small_spec(tmp_path / "s")
    config = mkdocs_config(tmp_path, spec)
    site = build_ok(config)
    before = sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file())
    assert len(before) > 10
    (spec / "fragments" / "greeting.yaml").write_text("role: developer\nslot: nowhere\ntext: x\n")
    proc = mkdocs_build(config)
    assert proc.returncode != 0 and "promptspec: error:" in proc.stderr
    assert sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file()) == before
