"""The site at scale: per-variant pages up to a choice (`variant_pages`),
summaries on overview pages above a list limit, the explorer page, page
reuse across `mkdocs serve` rebuilds, `-v` timings and the progress bar.

Summary mode is exercised with a small `list_limit` on the embedded spec
rather than with a huge spec, so these tests stay quick; the figures at
10,000 variants are bench/bench.py's job.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from promptspec import pipeline
from promptspec.site import explorer
from promptspec.site import build as site
from promptspec.site import select as site_select
from promptspec.site.pages import summary as site_summary
from promptspec.cli import main
from promptspec.errors import UsageError
from promptspec.site.index import SiteIndex
from promptspec.measure.counter import TokenCounter

from _helpers import TEMPLATES, broken_links, build_ok, mkdocs_build, mkdocs_config, read_available, subprocess_env


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path_factory.mktemp("scale-cache")))


def deep_link(v) -> str:
    return f"explorer/?variant={v.id}"


# ---------------------------------------------------------------------------
# variant_pages: the option


def test_variant_pages_option_parses_keywords_and_filters():
    assert site_select.parse("auto") == site_select.VariantPages("auto")
    assert site_select.parse(" None ") == site_select.VariantPages("none")
    parsed = site_select.parse({"mode": "plan", "model": ["harbor-5*", "harbor-4-legacy"]})
    assert parsed.filters == (("mode", ("plan",)), ("model", ("harbor-5*", "harbor-4-legacy")))
    assert site_select.parse_cli(["mode=plan,execute", "model=harbor-5"]).filters == (("mode", ("plan", "execute")), ("model", ("harbor-5",)))
    assert site_select.parse_cli(["all"]) == site_select.VariantPages("all")
    for bad in ("some", {}, {"mode": []}, {"mode": True}, ["plan"], {"mode": {"a": 1}}):
        with pytest.raises(UsageError):
            site_select.parse(bad)
    for bad in (["all", "mode=plan"], ["mode"], ["mode=a", "mode=b"], ["=plan"]):
        with pytest.raises(UsageError):
            site_select.parse_cli(bad)


def test_variant_pages_selects_by_axis_values(result):
    axes = result.spec.axes
    assert site_select.select(site_select.parse("all"), result.variants, axes) is None
    assert site_select.select(site_select.parse("auto"), result.variants, axes) is None  # 88 <= 1,000
    assert site_select.select(site_select.parse("none"), result.variants, axes) == frozenset()
    chosen = site_select.select(site_select.parse({"mode": "plan", "model": "harbor-5*"}), result.variants, axes)
    assert chosen == {v for v in result.variants if v.mode == "plan" and v.model.startswith("harbor-5")}
    assert 0 < len(chosen) < len(result.variants)
    with pytest.raises(UsageError, match="no axis 'flavour'"):
        site_select.select(site_select.parse({"flavour": "x"}), result.variants, axes)
    with pytest.raises(UsageError, match="no value of axis 'mode' matches 'plna'"):
        site_select.select(site_select.parse({"mode": "plna"}), result.variants, axes)


def test_auto_turns_pages_off_above_the_limit(result, monkeypatch):
    monkeypatch.setattr(site_select, "AUTO_LIMIT", len(result.variants) - 1)
    assert site_select.select(site_select.AUTO, result.variants, result.spec.axes) == frozenset()


def test_build_site_without_variant_pages_links_everything_to_the_explorer(result):
    s = site.build_site(result, links="dir", variant_pages="none")
    assert s.variant_page_count == 0
    assert not [p for p in {**s.pages, **s.files} if "/variants/" in p]
    matrix = s.pages["prompts/index.md"]
    for v in result.variants:
        assert f'href="{deep_link(v)}"' in matrix
    # Every variant is still in the explorer data.
    data = json.loads(s.files["prompts/explorer/explorer-data.json"])
    reader = explorer.Reader(data)
    assert data["variants"] == len(result.variants)
    v = result.variants[0]
    assert reader.decode([x for _, x in v.values])["total"] == result.measure_of(v).total


def test_cli_build_variant_pages_filter(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["--cache-dir", str(tmp_path / "c"), "build", "--out", str(out), "--variant-pages", "mode=plan"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    pages = sorted(p.stem for p in (out / "prompts" / "variants").glob("*.md"))
    assert pages and all("--plan--" in p for p in pages)
    assert (out / "prompts" / "explorer" / "index.md").is_file()
    assert (out / "prompts" / "explorer" / "explorer-data.json").is_file()
    assert (out / "assets" / "promptspec" / "explorer.js").is_file()
    code = main(["--cache-dir", str(tmp_path / "c"), "build", "--out", str(out), "--variant-pages", "mode=nope"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [err.strip()] and "no value of axis 'mode' matches 'nope'" in err


# ---------------------------------------------------------------------------
# Real MkDocs builds


@pytest.fixture(scope="module")
def filtered_site(tmp_path_factory):
    """variant_pages: {mode: plan}; lists stay in full (88 variants)."""
    tmp = tmp_path_factory.mktemp("site-filtered")
    config = mkdocs_config(tmp, TEMPLATES, variant_pages={"mode": "plan"})
    proc = mkdocs_build(config)
    assert proc.returncode == 0, proc.stderr
    return tmp / "site", proc


@pytest.fixture(scope="module")
def summary_site(tmp_path_factory):
    """variant_pages: none and a list limit of 5: every overview page in summary mode."""
    tmp = tmp_path_factory.mktemp("site-summary")
    return build_ok(mkdocs_config(tmp, TEMPLATES, variant_pages="none", list_limit=5))


def test_filtered_site_has_pages_only_for_the_filter(filtered_site, result):
    site_dir, _ = filtered_site
    for v in result.variants:
        page = site_dir / "prompts" / "variants" / v.slug / "index.html"
        assert page.is_file() == (v.mode == "plan"), v.id
        assert (site_dir / "prompts" / "variants" / f"{v.slug}.json").is_file() == (v.mode == "plan")
    matrix = (site_dir / "prompts" / "index.html").read_text(encoding="utf-8")
    for v in result.variants:
        target = f'href="variants/{v.slug}/"' if v.mode == "plan" else f'href="{deep_link(v)}"'
        assert target in matrix, v.id
    # A plan page links its non-plan siblings to the explorer, and itself to the explorer too.
    v = next(v for v in result.variants if v.mode == "plan")
    page = (site_dir / "prompts" / "variants" / v.slug / "index.html").read_text(encoding="utf-8")
    other = next(w for w in result.variants if w.mode == "execute" and w.values[:2] == v.values[:2] and w.values[3:] == v.values[3:])
    assert f'href="../../explorer/?variant={other.id}"' in page
    assert f'href="../../explorer/?variant={v.id}"' in page  # "open in explorer"
    count, broken = broken_links(site_dir)
    assert count > 500 and broken == []


def test_plugin_logs_stage_timings(filtered_site, result):
    _, proc = filtered_site
    line = next(line for line in proc.stderr.splitlines() if "promptspec: 88 variants" in line)
    for stage in ("load", "assemble", "count", "lint", "explorer", "pages", "total"):
        assert f"{stage} " in line, line
    assert f"{sum(v.mode == 'plan' for v in result.variants)} variant pages" in line


def test_explorer_page_is_in_the_site_and_its_data_loads(filtered_site, result):
    site_dir, _ = filtered_site
    page = (site_dir / "prompts" / "explorer" / "index.html").read_text(encoding="utf-8")
    assert 'data-src="explorer-data.json"' in page
    assert 'src="../../assets/promptspec/explorer.js"' in page
    assert not re.search(r'(src|href)="(https?:)?//', page.split('<div class="promptspec-explorer"')[1].split("</div>")[0])
    data = json.loads((site_dir / "prompts" / "explorer" / "explorer-data.json").read_bytes())
    assert data == explorer.build(result)
    for name in explorer.ASSETS:
        assert (site_dir / "assets" / "promptspec" / name).read_bytes() == explorer.asset_bytes(name)
    # Listed in the nav, after the matrix.
    matrix = (site_dir / "prompts" / "index.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav class="md-nav md-nav--primary".*?</nav>\s*</div>', matrix, re.S).group(0)
    hrefs = re.findall(r'href="([^"]*)"', nav)
    assert hrefs.index("explorer/") == hrefs.index("./") + 1


def test_summary_site_builds_strict_without_broken_links(summary_site, result):
    site_dir = summary_site
    assert not (site_dir / "prompts" / "variants").exists()
    count, broken = broken_links(site_dir)
    assert count > 300 and broken == []
    mode = (site_dir / "prompts" / "modes" / "plan" / "index.html").read_text(encoding="utf-8")
    assert "More than 5, so not listed one by one" in mode
    assert "plan vs default" in mode and "pairs where it differs" in mode
    assert "explorer/?variant=" in mode


# ---------------------------------------------------------------------------
# Summary mode (small list limit, same spec)


def test_overview_pages_keep_full_lists_under_the_limit(result):
    """The default limit keeps the embedded spec's pages as they were: every
    variant listed and every pair compared row by row."""
    s = site.build_site(result, links="dir")
    plan = s.pages["prompts/modes/plan.md"]
    assert "More than" not in plan and "pairs where it differs" not in plan
    plan_variants = [v for v in result.variants if v.mode == "plan"]
    for v in plan_variants:
        assert f'href="../../variants/{v.slug}/"' in plan
    assert '<td class="ps-cell' in s.pages["prompts/index.md"]


def test_overview_pages_summarise_above_the_limit(result):
    s = site.build_site(result, links="dir", list_limit=5)
    plan = s.pages["prompts/modes/plan.md"]
    plan_variants = [v for v in result.variants if v.mode == "plan"]
    assert f"## Variants ({len(plan_variants)})" in plan
    assert "More than 5, so not listed one by one" in plan
    assert "### By model" in plan and "### By sandbox_mode" in plan
    # Not every plan variant is named any more: only min/max and examples.
    named = {v for v in plan_variants if v.id in plan}
    assert len(named) < len(plan_variants)
    assert "plan vs default" in plan and "pairs where it differs" in plan
    assert "+ only here in" in plan  # review_checklist only exists in plan
    # Matrix: model x mode aggregates instead of one cell per variant (88 > 5 x 5).
    matrix = s.pages["prompts/index.md"]
    assert "## Tokens per model and mode" in matrix and "ps-summary" in matrix
    assert matrix.count('class="ps-cell ') == len(result.spec.models) * len(result.spec.modes)
    # Fragment pages: renderings with their variants described, not listed.
    frag = s.pages["prompts/fragments/collaboration_mode.md"]
    assert "so each rendering says which variants use it" in frag
    assert "mode = <code>plan</code>" in frag
    assert frag.count("explorer/?variant=") <= frag.count("rendering ") + 1
    # Same pages, smaller.
    full = site.build_site(result, links="dir")
    assert len(plan) < len(full.pages["prompts/modes/plan.md"])


def test_summary_comparisons_match_every_pair(result):
    """The aggregated comparison equals what pairing each variant with its
    counterpart and diffing them part by part gives, both ways round."""
    idx = SiteIndex(result, links="dir")
    for axis, values in result.spec.axes:
        for x in values:
            for y in values:
                if x == y:
                    continue
                cmp = site_summary.comparison(idx, axis, x, y)
                pairs = [(v, idx.sibling(v, axis, y)) for v in idx.with_value(axis, x)]
                pairs = [(v, w) for v, w in pairs if w is not None]
                assert cmp.pairs == len(pairs)
                assert cmp.deltas == [idx.measure[v].total - idx.measure[w].total for v, w in pairs]
                expected: dict[str, list[int]] = {}
                for v, w in pairs:
                    rv, rw = idx.request[v], idx.request[w]
                    if rv.base.text != rw.base.text:
                        expected.setdefault("instructions", []).append(idx.measure[v].base - idx.measure[w].base)
                    sv, sw = idx.sections_by_fragment(v), idx.sections_by_fragment(w)
                    for name in set(sv) | set(sw):
                        a, b = sv.get(name), sw.get(name)
                        if a and b and a.section.text == b.section.text:
                            continue
                        expected.setdefault(name, []).append((a.tokens if a else 0) - (b.tokens if b else 0))
                got = {p.name: p for p in cmp.parts}
                assert set(got) == set(expected), (axis, x, y)
                for name, deltas in expected.items():
                    assert (got[name].differs, got[name].lo, got[name].hi) == (len(deltas), min(deltas), max(deltas)), (axis, x, y, name)


def test_summary_pages_are_deterministic(result, tmp_path):
    again = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "fresh"))
    a = site.build_site(result, links="dir", list_limit=5, variant_pages="none")
    b = site.build_site(again, links="dir", list_limit=5, variant_pages="none")
    assert a == b


# ---------------------------------------------------------------------------
# Reuse across rebuilds (mkdocs serve)


def test_page_cache_remakes_only_the_edited_variants(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    counter = TokenCounter(tmp_path / "cache")
    session = pipeline.Session(spec, counter=counter)
    cache = site.PageCache()
    first = site.build_site(session.run(), links="dir", cache=cache)
    assert cache.made == 0  # variant pages are made when read
    first_pages = dict(first.pages)
    assert cache.made == 88 and cache.reused == 0
    body = spec / "fragments" / "review_checklist.md"
    body.write_text(body.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    result = session.run()
    redone = session.changes.variants
    assert redone and len(redone) < 88 and all(v.mode == "plan" for v in redone)
    second = site.build_site(result, links="dir", cache=cache)
    second_pages = dict(second.pages)
    assert cache.made == len(redone) and cache.reused == 88 - len(redone)
    # Exactly what a build from scratch gives.
    fresh = site.build_site(pipeline.run(spec, counter=counter), links="dir")
    assert second == fresh
    v = next(iter(redone))
    assert second_pages[f"prompts/variants/{v.slug}.md"] != first_pages[f"prompts/variants/{v.slug}.md"]
    # A different choice of pages changes links on every page: nothing is reused.
    dict(site.build_site(result, links="dir", cache=cache, variant_pages={"mode": "plan"}).pages)
    assert cache.reused == 0 and cache.made == 24


def test_kept_other_variants_tables_are_made_once_per_layout(tmp_path, monkeypatch):
    """Under serve each variant's "Other variants" table is kept (it is the
    matrix's shape alone): a variant an edit re-made takes it back instead of
    walking the axes again; a new axis value that adds no variant (the
    matrix excludes it) makes every table again.  Each build gives what a
    build from scratch gives."""
    from promptspec.site.pages import variant as site_variant

    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    counter = TokenCounter(tmp_path / "cache")
    session = pipeline.Session(spec, counter=counter)
    cache = site.PageCache()
    made: list = []
    real = site_variant._others_table
    monkeypatch.setattr(site_variant, "_others_table", lambda idx, v, page: made.append(v) or real(idx, v, page))

    def build_and_compare() -> dict:
        pages = dict(site.build_site(session.run(), links="dir", cache=cache).pages)
        fresh = dict(site.build_site(pipeline.run(spec, counter=counter), links="dir").pages)
        assert pages == fresh
        return pages

    build_and_compare()
    assert len(made) == 88 * 2  # this build's 88, and the fresh one's (which keeps none)
    body = spec / "fragments" / "review_checklist.md"
    body.write_text(body.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    made.clear()
    build_and_compare()
    assert session.changes.variants and len(made) == 88  # the fresh build's alone
    yaml_file = spec / "spec.yaml"
    text = yaml_file.read_text(encoding="utf-8")
    text = text.replace("sandbox_mode: [workspace-write, read-only]", "sandbox_mode: [workspace-write, read-only, locked-down]")
    text = text.replace("  exclude:\n", "  exclude:\n    - sandbox_mode: locked-down\n")
    yaml_file.write_text(text, encoding="utf-8")
    made.clear()
    pages = build_and_compare()
    assert len(made) == 88 * 2 and len([p for p in pages if "/variants/" in p]) == 88
    assert all("locked-down" in text for p, text in pages.items() if "/variants/" in p)


def test_kept_comparisons_give_what_a_build_from_scratch_gives(tmp_path, monkeypatch):
    """Under serve the summary comparisons are kept (summary.KEPT): after an
    edit of the plan mode's text the comparisons it reached are made again,
    the others read back, within a remade one only the pairs with an edited
    variant are diffed again, no comparison is walked pair by pair to find
    them, and the overview pages are what a build from scratch makes."""
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    counter = TokenCounter(tmp_path / "cache")
    session = pipeline.Session(spec, counter=counter)
    cache = site.PageCache()
    first = dict(site.build_site(session.run(), links="dir", cache=cache, list_limit=5, variant_pages="none").pages)
    kept = lambda: {key: entry[1] for key, entry in cache._comparisons.items() if key != site_summary._SEEN}  # noqa: E731
    before = kept()
    body = spec / "fragments" / "review_checklist.md"
    body.write_text(body.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    diffed: list[tuple] = []
    real_pair = site_summary._pair
    monkeypatch.setattr(site_summary, "_pair", lambda rv, rw: diffed.append((rv.v, rw.v)) or real_pair(rv, rw))
    walked: list[tuple] = []
    real_pairs = site_summary._pairs
    monkeypatch.setattr(site_summary, "_pairs", lambda idx, *args: walked.append(args) or real_pairs(idx, *args))
    result = session.run()
    redone = session.changes.variants
    second = dict(site.build_site(result, links="dir", cache=cache, list_limit=5, variant_pages="none").pages)
    monkeypatch.setattr(site_summary, "_pair", real_pair)
    monkeypatch.setattr(site_summary, "_pairs", real_pairs)
    fresh = dict(site.build_site(pipeline.run(spec, counter=counter), links="dir", list_limit=5, variant_pages="none").pages)
    assert second == fresh and second["prompts/modes/plan.md"] != first["prompts/modes/plan.md"]
    after = kept()
    remade = {key for key in after if after[key] is not before.get(key)}
    assert remade and len(remade) < len(after)
    assert ("compare", "mode", "default", "plan") in remade and ("compare", "mode", "default", "execute") not in remade
    # Each pair diffed again holds an edited variant; the model comparisons also hold pairs of other modes, kept.
    assert diffed and all(v in redone or w in redone for v, w in diffed)
    pairs = sum(cmp.pairs for key, cmp in after.items() if key in remade)
    assert len(diffed) < pairs
    # The edited variants are found once for the build: no comparison's pairs are walked again to find them.
    assert walked == []


# ---------------------------------------------------------------------------
# -v and the progress bar


@pytest.mark.parametrize("argv", [["list"], ["lint"], ["lock", "--lock", "{tmp}/lock.json"], ["build", "--out", "{tmp}/out"]])
def test_verbose_prints_stage_timings(argv, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code = main(["--cache-dir", str(tmp_path / "c"), "-v", *argv[:1], "--spec", str(TEMPLATES), *argv[1:]])
    err = capsys.readouterr().err
    assert code == 0, err
    line = next(line for line in err.splitlines() if line.startswith("promptspec: load "))
    assert re.search(r"load [0-9.]+ s · assemble [0-9.]+ s · count [0-9.]+ s", line)
    assert line.endswith(" s") and "total" in line
    if argv[0] == "build":
        assert "pages" in line and "explorer" in line
    code = main(["--cache-dir", str(tmp_path / "c"), *argv[:1], "--spec", str(TEMPLATES), *argv[1:]])
    assert code == 0 and "promptspec: load" not in capsys.readouterr().err


def _build_on(stderr_fd: int | None, tmp_path: Path, env: dict, spec: Path = TEMPLATES) -> tuple[int, bytes]:
    """`promptspec build` of `spec` with stderr on `stderr_fd` (a pty), or a pipe when None.
    A subprocess on purpose: what the process prints depends on its stderr being a terminal."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "promptspec.cli", "--cache-dir", str(tmp_path / "c"), "build", "--spec", str(spec),
         "--out", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=stderr_fd if stderr_fd is not None else subprocess.PIPE, env=env,
    )
    if stderr_fd is None:
        _, err = proc.communicate(timeout=300)
        return proc.returncode, err
    return proc.wait(timeout=300), b""


def test_build_shows_progress_on_a_terminal_only(tmp_path, make_spec):
    env = {k: v for k, v in subprocess_env().items() if k != "CI"}
    master, slave = pty.openpty()
    try:
        code, _ = _build_on(slave, tmp_path, env)  # the embedded spec: enough variants to show a count
        out = read_available(master).decode("utf-8", "replace")
    finally:
        os.close(slave)
        os.close(master)
    assert code == 0, out
    assert "\r" in out and "assembling [" in out and "88/88" in out
    assert "pages [" in out
    # Not a terminal: nothing but the result line goes to stderr (a small spec: what is said, not how much).
    small = make_spec()
    code, err = _build_on(None, tmp_path, env, small)
    assert code == 0 and err == b""
    # CI=true: silent even on a terminal.
    master, slave = pty.openpty()
    try:
        code, _ = _build_on(slave, tmp_path, {**env, "CI": "true"}, small)
        out = read_available(master)
    finally:
        os.close(slave)
        os.close(master)
    assert code == 0 and b"\r" not in out and b"assembling" not in out


# ---------------------------------------------------------------------------
# promptspec explore


def test_explore_writes_the_standalone_explorer(tmp_path, result, capsys):
    out = tmp_path / "explorer"
    code = main(["--cache-dir", str(tmp_path / "c"), "explore", "--spec", str(TEMPLATES), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.html", "explorer-data.json", "explorer-data.js", *explorer.ASSETS])
    assert json.loads((out / "explorer-data.json").read_bytes()) == explorer.build(result)
    assert "//cdn" not in (out / "index.html").read_text(encoding="utf-8")
    # Refuses a folder with other files, and leaves it alone.
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep", encoding="utf-8")
    code = main(["--cache-dir", str(tmp_path / "c"), "explore", "--out", str(other)])
    assert code == 2 and "holds other files" in capsys.readouterr().err
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_lock_entries_kept_across_builds_give_a_fresh_comparison(tmp_path):
    """site.BaseLoader keeps the head's lock entries between serve builds:
    after an edit, the Changes page is what a comparison from scratch gives."""
    from promptspec.site.base import BaseLoader

    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    counter = TokenCounter(tmp_path / "cache")
    session = pipeline.Session(spec, counter=counter)
    loader = BaseLoader()
    loader.load("lock", spec, session.run())
    body = spec / "fragments" / "review_checklist.md"
    body.write_text(body.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    result = session.run()
    kept = loader.load("lock", spec, result)
    fresh_result = pipeline.run(spec, counter=counter)
    fresh = BaseLoader().load("lock", spec, fresh_result)
    page = lambda r, ch: site.build_site(r, links="dir", changes=ch).pages["prompts/changes.md"]  # noqa: E731
    assert "review_checklist" in page(result, kept)
    assert page(result, kept) == page(fresh_result, fresh)
