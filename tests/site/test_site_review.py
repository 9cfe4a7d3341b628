"""The Changes page and the "changed since base" badges.

Real builds: a copy of the embedded spec (with its prompts.lock.json) with one
fragment body edited, compared with the lock; and a temporary git repository
with two commits, compared with the first (`base: HEAD~1`), whose unified
diff must be the one `promptspec diff` prints.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest

from promptspec import pipeline
from promptspec.review import lockfile
from promptspec import review
from promptspec.site import build as site
from promptspec.site.pages import changes as site_changes
from promptspec.measure.counter import TokenCounter

from _helpers import TEMPLATES, break_spec, broken_links, build_ok, cli, commit, git, mkdocs_build, mkdocs_config, mkdocs_serve, poll, subprocess_env

OLD = "Before you propose a plan"
NEW = "Before you propose a <b>plan</b> & `ticks`"
UDIFF_RE = re.compile(r'<pre class="ps-udiff" data-search-exclude><code>(.*?)</code></pre>', re.S)


def edit(spec: Path) -> None:
    body = spec / "fragments" / "review_checklist.md"
    text = body.read_text(encoding="utf-8")
    assert OLD in text
    body.write_text(text.replace(OLD, NEW), encoding="utf-8")


def shown_diff(fragment_html: str) -> str:
    """The text of a ps-udiff block, as a reader sees it."""
    return html.unescape(re.sub(r"</?(?:span|del|ins)\b[^>]*>", "", fragment_html))


def page_of(site_dir: Path, rel: str) -> str:
    return (site_dir / rel / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# base: lock (the default)


@pytest.fixture(scope="module")
def lock_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-lock")
    spec = tmp / "spec"
    shutil.copytree(TEMPLATES, spec)
    assert (spec / lockfile.LOCK_FILE).is_file()
    edit(spec)
    site_dir = build_ok(mkdocs_config(tmp, spec))
    result = pipeline.run(spec, counter=TokenCounter(tmp / "cache"))
    diff = review.compare_to_lock(lockfile.read(spec / lockfile.LOCK_FILE), result)
    return site_dir, result, diff


def test_lock_changes_page_lists_changed_variants_and_the_fragment(lock_site):
    site_dir, result, diff = lock_site
    changed = {c.id for c in diff.changed}
    plan = {v.id for v in result.variants if v.mode == "plan"}
    assert changed == plan and not diff.added and not diff.removed  # the checklist is plan-only
    page = page_of(site_dir, "prompts/changes")
    assert "<code>prompts.lock.json</code>" in page
    counts = re.search(r'class="ps-table ps-facts ps-change-counts".*?</table>', page, re.S).group(0)
    assert f'<th>changed</th><td class="ps-r">{len(changed)}</td>' in counts
    assert f'<th>unchanged</th><td class="ps-r">{len(result.variants) - len(changed)}</td>' in counts
    for v in result.variants:
        linked = f'href="../variants/{v.slug}/"' in page
        assert linked == (v.id in changed), v.id
    # One change, grouped across every variant it reached, linked to the fragment.
    assert f"In {len(changed)} variants" in page
    assert 'href="../fragments/review_checklist/"' in page
    delta = {c.total_after - c.total_before for c in diff.changed}
    assert len(delta) == 1 and f"+{delta.pop()}" in page
    assert "not its text" in page  # a lock has no text to diff


def test_badges_only_on_changed_variant_pages(lock_site):
    site_dir, result, diff = lock_site
    changed = {c.id for c in diff.changed}
    for v in result.variants:
        page = page_of(site_dir, f"prompts/variants/{v.slug}")
        has = '<span class="ps-badge ps-badge-changed"' in page
        assert has == (v.id in changed), v.id
        assert ('id="changes-since-base"' in page) == (v.id in changed)
    c = diff.changed[0]
    v = next(v for v in result.variants if v.id == c.id)
    page = page_of(site_dir, f"prompts/variants/{v.slug}")
    section = page[page.index('id="changes-since-base"'):page.index('id="tokens-and-send-order"')]
    (s,) = c.sections
    assert s.fragment == "review_checklist"
    assert f'<td class="ps-r">{s.tokens_before}</td><td class="ps-r">{s.tokens_after}</td>' in section
    assert "not its text" in section


def test_lock_site_links_resolve(lock_site):
    count, broken = broken_links(lock_site[0])
    assert count > 1000 and broken == []


def test_missing_lock_is_explained_not_an_error(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    (spec / lockfile.LOCK_FILE).unlink()
    site_dir = build_ok(mkdocs_config(tmp_path, spec))
    page = page_of(site_dir, "prompts/changes")
    assert "There is no lock file yet" in page
    assert "promptspec lock" in page
    assert not any("ps-badge" in p.read_text(encoding="utf-8") for p in (site_dir / "prompts" / "variants").rglob("*.html"))


def test_a_malformed_lock_stops_the_build_with_one_line(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    (spec / lockfile.LOCK_FILE).write_text("{not json", encoding="utf-8")
    proc = mkdocs_build(mkdocs_config(tmp_path, spec))
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "promptspec: error:" in line]
    assert len(lines) == 1 and "prompts.lock.json" in lines[0] and "not valid JSON" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_base_none_turns_the_comparison_off(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    edit(spec)
    out = tmp_path / "out"
    proc = cli("--cache-dir", str(tmp_path / "cache"), "build", "--spec", str(spec), "--base", "none", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "<code>base</code> option is <code>none</code>" in (out / "prompts" / "changes.md").read_text(encoding="utf-8")
    assert not any("ps-badge" in p.read_text(encoding="utf-8") for p in (out / "prompts" / "variants").glob("*.md"))
    # The default (lock) sees the edit.
    proc = cli("--cache-dir", str(tmp_path / "cache"), "build", "--spec", str(spec), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert sum("ps-badge-changed" in p.read_text(encoding="utf-8") for p in (out / "prompts" / "variants").glob("*.md")) == 24


def test_lock_groups_identical_changes(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    edit(spec)
    result = pipeline.run(spec, counter=TokenCounter(tmp_path / "cache"))
    from promptspec.site.base import load_lock

    ch = load_lock(spec, result)
    diff = ch.diff
    assert ch.kind == "lock" and diff is not None and len(diff.groups) == 1
    (g,) = diff.groups
    assert g.fragment == "review_checklist" and g.kind == "changed" and len(g.variants) == 24 and g.diff is None
    assert all(diff.status_of(vid) == "changed" for vid in g.variants)
    assert diff.status_of("harbor-5/default/default/read-only") == "unchanged"


# ---------------------------------------------------------------------------
# base: a git revision


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("site-git")
    work = root / "repo"
    work.mkdir()
    git(work, "init", "-q")
    shutil.copytree(TEMPLATES, work / "templates")
    commit(work, "first")
    edit(work / "templates")
    commit(work, "second")
    return work


@pytest.fixture(scope="module")
def git_site(repo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site-git-build")
    site_dir = build_ok(mkdocs_config(tmp, repo / "templates", base="HEAD~1"))
    proc = cli("--cache-dir", str(tmp / "cache"), "diff", "HEAD~1", "--spec", str(repo / "templates"), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return site_dir, json.loads(proc.stdout)


def test_git_changes_page_shows_the_diff_exactly(git_site):
    site_dir, expected = git_site
    page = page_of(site_dir, "prompts/changes")
    first = expected["base"]
    assert html.escape(first) in page or first.replace("~", "&#126;") in page
    (change,) = expected["changes"]
    assert change["fragment"] == "review_checklist"
    blocks = UDIFF_RE.findall(page)
    assert [shown_diff(b) for b in blocks] == [change["diff"]]
    # The changed words of the changed line are marked (and prompt text inside the marks stays escaped).
    assert '<ins class="ps-word">&lt;b&gt;</ins>' in blocks[0]
    assert f"-{OLD}" in change["diff"] and f"+{NEW}" in change["diff"]
    # Prompt text stays text: no tag, no code span from the backticks.
    assert "<b>plan</b>" not in page
    assert "<code>ticks</code>" not in page
    # Same counts as `promptspec diff`.
    counts = expected["counts"]
    assert f'<th>changed</th><td class="ps-r">{counts["changed"]}</td>' in page
    assert f'<th>unchanged</th><td class="ps-r">{counts["unchanged"]}</td>' in page
    assert "fragments/review_checklist.md" in page and "modified" in page  # spec files changed
    for row in expected["largest_increases"]:
        assert f"<code>{html.escape(row['id'])}</code>" in page


def test_git_variant_pages_carry_badge_and_section_diff(git_site):
    site_dir, expected = git_site
    changed = {c["id"] for c in expected["variants"]["changed"]}
    (change,) = expected["changes"]
    slugs = {p.parent.name: p for p in (site_dir / "prompts" / "variants").glob("*/index.html")}
    assert len(slugs) == 88
    seen = 0
    for slug, path in slugs.items():
        page = path.read_text(encoding="utf-8")
        vid = slug.replace("--", "/")
        assert ('ps-badge-changed' in page) == (vid in changed), vid
        if vid in changed:
            seen += 1
            assert [shown_diff(b) for b in UDIFF_RE.findall(page)] == [change["diff"]]
    assert seen == len(changed) == 24


def test_git_base_links_resolve(git_site):
    count, broken = broken_links(git_site[0])
    assert broken == []


def test_unknown_revision_stops_the_build_with_one_line(repo, tmp_path):
    proc = mkdocs_build(mkdocs_config(tmp_path, repo / "templates", base="no-such-revision"))
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if "promptspec: error:" in line]
    assert len(lines) == 1, proc.stderr
    assert "base 'no-such-revision'" in lines[0] and "unknown git revision" in lines[0]
    assert "Traceback" not in proc.stderr


def test_build_out_takes_a_git_base(repo, tmp_path):
    out = tmp_path / "out"
    proc = cli("--cache-dir", str(tmp_path / "cache"), "build", "--spec", str(repo / "templates"), "--base", "HEAD~1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    changes = (out / "prompts" / "changes.md").read_text(encoding="utf-8")
    assert len(UDIFF_RE.findall(changes)) == 1
    assert 'href="variants/harbor-5--default--plan--read-only.md"' in changes
    bad = cli("--cache-dir", str(tmp_path / "cache"), "build", "--spec", str(repo / "templates"), "--base", "nope~9", "--out", str(tmp_path / "out2"))
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("promptspec: error: base 'nope~9':")
    assert not (tmp_path / "out2").exists()


def test_git_base_that_does_not_load_names_the_side(tmp_path):
    work = tmp_path / "repo"
    work.mkdir()
    git(work, "init", "-q")
    shutil.copytree(TEMPLATES, work / "templates")
    break_spec(work / "templates")
    commit(work, "broken")
    shutil.copy(TEMPLATES / "fragments" / "apps.yaml", work / "templates" / "fragments" / "apps.yaml")
    proc = cli("--cache-dir", str(tmp_path / "cache"), "build", "--spec", str(work / "templates"), "--base", "HEAD", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("promptspec: error: base (HEAD (") and "fragments/apps.yaml" in proc.stderr


def test_serve_shows_a_banner_when_the_base_fails(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)  # not in a git repository
    config = mkdocs_config(tmp_path, spec, base="origin/main")
    env = subprocess_env(GIT_CEILING_DIRECTORIES=str(tmp_path.parent))
    with mkdocs_serve(config, tmp_path / "serve.log", env=env) as server:
        page = poll(f"{server}/prompts/fragments/apps/", lambda b: "ps-error" in b)
        assert "base for the Changes page could not be loaded" in page
        assert "not inside a git repository" in page
        changes = poll(f"{server}/prompts/changes/", lambda b: "could not be loaded" in b)
        assert "origin/main" in changes
        assert "promptspec: error: base 'origin/main'" in (tmp_path / "serve.log").read_text()


# ---------------------------------------------------------------------------
# pure rendering


def test_changes_rendering_escapes_labels_and_is_deterministic(tmp_path):
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path))
    failed = site_changes.failed("<img src=x>", "base '<img src=x>': unknown")
    a = site.build_site(result, links="dir", changes=failed)
    b = site.build_site(result, links="dir", changes=failed)
    assert a == b
    page = a.pages["prompts/changes.md"]
    assert "<img" not in page and "&lt;img src=x&gt;" in page


def test_moved_sections_show_positions_and_orders(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec)
    layout = ["developer_extensions", "model_switch", "permissions", "developer_instructions", "collaboration_mode",
              "realtime", "personality", "apps", "skills", "plugins", "token_budget"]
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    assert "\nlayout:\n" in text  # the embedded spec has a layout (for its tools): add the slots to it
    (spec / "spec.yaml").write_text(text.replace("\nlayout:\n", "\nlayout:\n  developer: [" + ", ".join(layout) + "]\n", 1), encoding="utf-8")
    counter = TokenCounter(tmp_path / "cache")
    base, head = pipeline.run(TEMPLATES, counter=counter), pipeline.run(spec, counter=counter)
    diff = review.compare(base, head, base_label="before", head_label="after")
    ch = site_changes.compared(diff)
    moved = [g for g in diff.groups if g.kind == "moved"]
    assert moved and all(site_changes.group_text_diff(g) is None and site_changes.group_detail(g) for g in moved)
    pages = site.build_site(head, links="dir", changes=ch).pages
    page = pages["prompts/changes.md"]
    assert "positions in its message: #" in page and "order before (developer" in page
    g = moved[0]
    v = next(v for v in head.variants if v.id == g.variants[0])
    vpage = pages[f"prompts/variants/{v.slug}.md"]
    assert "ps-badge-changed" in vpage and "order after (developer)" in vpage
    c = diff.variant(v.id)
    assert c is not None
    assert any(kind == "moved" and before == after and before is not None for _, kind, before, after, _, _ in site_changes.variant_parts(diff, c))
