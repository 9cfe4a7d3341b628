"""True provenance: an edit to each kind of spec file is attributed to exactly
that file, with the right number of variants, in every output.

For each kind of edit (fragment body, fragment yaml, mode, personality,
permissions text, models.json field, AGENTS.md of the sample tree, tool) the
expected variants are found independently -- by assembling both sides and
comparing the exact payloads -- and then every output is checked: the diff's
changes and file reach, the text, Markdown and JSON reports, `check` against a
lock of the base, the site's Changes page data (git and lock bases), and the
GitHub annotations.  One mode edit also goes through real git and the CLI,
and its Markdown must fit on one screen.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from promptspec import review
from promptspec.assemble import export
from promptspec.assemble.builder import Assembler
from promptspec.assemble.matrix import matrix
from promptspec.cli import main
from promptspec.measure.counter import TokenCounter
from promptspec.pipeline import run
from promptspec.review import lockfile
from promptspec.review.check_output import changed_files, check_output, format_check
from promptspec.review.gitspec import digest_tree
from promptspec.site.pages import changes as site_changes
from promptspec.spec.readers.load import load_spec

from _helpers import TEMPLATES, commit, git


def _append(path: Path, line: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text.rstrip("\n") + "\n" + line + ("\n" if text.endswith("\n") else ""), encoding="utf-8")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _models_field(spec: Path) -> None:
    path = spec / "models.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    model = next(m for m in data["models"] if m["slug"] == "harbor-5")
    model["context_window"] = model["context_window"] + 1000
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# kind -> (the file that is edited, the edit, the source key it must be attributed to)
EDITS = {
    "fragment body": ("fragments/skills.md", lambda s: _append(s / "fragments/skills.md", "Prefer a skill over improvising."), "fragments/skills.md"),
    "fragment yaml": ("fragments/collaboration_mode.yaml",
                      lambda s: _replace(s / "fragments/collaboration_mode.yaml", 'text: "\\n{{ mode.text }}"', 'text: "\\nMode in force:\\n{{ mode.text }}"'),
                      "fragments/collaboration_mode.yaml"),
    "mode": ("modes/plan.md", lambda s: _append(s / "modes/plan.md", "List the risks you see, one line each."), "modes/plan.md"),
    "personality": ("personalities/friendly.md", lambda s: _append(s / "personalities/friendly.md", "Thank the user when they help."), "personalities/friendly.md"),
    "permissions text": ("permissions/sandbox/read-only.md",
                         lambda s: _append(s / "permissions/sandbox/read-only.md", "Say so when a task needs write access."),
                         "permissions/sandbox/read-only.md"),
    "models.json field": ("models.json", _models_field, "models.json#harbor-5.context_window"),
    "AGENTS.md in the tree": ("project/AGENTS.md", lambda s: _append(s / "project/AGENTS.md", "- Keep functions short."), "project/AGENTS.md"),
    "tool": ("tools/shell.yaml", lambda s: _replace(s / "tools/shell.yaml", "Prefer one focused command per call;", "Prefer one short command per call;"),
             "tools/shell.yaml"),
}


def _key(source: str) -> str:
    """A source as shown ("models.json#harbor-5.context_window:4") without its line range."""
    return re.sub(r":\d+(-\d+)?$", "", source)


def payloads(spec_dir: Path) -> dict[str, str]:
    spec = load_spec(spec_dir)
    asm = Assembler(spec)
    return {v.id: json.dumps(export.responses_payload(asm.assemble(v)), sort_keys=True) for v in matrix(spec)}


@pytest.fixture(scope="module")
def counter(tmp_path_factory) -> TokenCounter:
    return TokenCounter(tmp_path_factory.mktemp("attribution-cache"))


@pytest.fixture(scope="module")
def base(tmp_path_factory, counter):
    spec = tmp_path_factory.mktemp("attribution-base") / "templates"
    shutil.copytree(TEMPLATES, spec)
    return spec, run(spec, counter=counter), payloads(spec)


@pytest.mark.parametrize("kind", list(EDITS))
def test_an_edit_is_attributed_to_exactly_its_file(kind, base, counter, tmp_path) -> None:
    base_dir, base_result, base_payloads = base
    edited, apply, key = EDITS[kind]
    head_dir = tmp_path / "templates"
    shutil.copytree(base_dir, head_dir)
    apply(head_dir)
    head_payloads = payloads(head_dir)
    want = sorted(v for v in base_payloads if head_payloads.get(v) != base_payloads[v])
    assert want, f"the {kind} edit must change some variant"
    head_result = run(head_dir, counter=counter)
    files = review.file_changes(digest_tree(base_dir), digest_tree(head_dir))
    assert [(f.path, f.status) for f in files] == [(edited, "modified")]

    diff = review.compare(base_result, head_result, files=files)
    assert sorted(c.id for c in diff.changed) == want
    # Every change names exactly the edited source; the file reaches exactly the changed variants.
    assert diff.groups
    for g in diff.groups:
        assert g.changed_sources == (key,), (g.id, g.fragment, g.changed_sources)
        assert g.changed_files == (edited,)
        assert key in g.sources
    assert diff.files_to_variants() == {edited: tuple(want)}

    text = review.to_text(diff)
    assert f"modified {edited}  (reaches {len(want)} variants)" in text
    assert all(f"changed: {key}" in line for line in text.splitlines() if re.match(r"\s+\[c\d+\]", line))
    md = review.to_markdown(diff)
    assert f"changed: {review.md_code(key)}" in md
    assert f"{review.md_code(edited)} (modified; reaches {len(want)} variants)" in md
    data = json.loads(review.to_json(diff))
    assert {tuple(c["changed_sources"]) for c in data["changes"]} == {(key,)}
    assert data["files"] == [{"path": edited, "status": "modified", "variants": want}]
    assert data["reach"] == {edited: want}

    # check: against a lock of the base, every changed section names the file.
    lock = json.loads(lockfile.dumps(lockfile.build(base_result)))
    ldiff = review.compare_to_lock(lock, head_result)
    assert sorted(c.id for c in ldiff.changed) == want
    assert ldiff.base_kind == "lock" and type(ldiff) is type(diff)  # one model of a change, whichever the base
    for c in ldiff.changed:
        assert c.all_changes
        for s in c.all_changes:
            assert [_key(k) for k in s.changed_sources] == [key], (c.id, s)
    report = format_check(ldiff, "prompts.lock.json", axes=head_result.spec.axes)
    assert f"  {edited} changed: reaches {len(want)} of 88 variants" in report or (len(want) == 88 and f"  {edited} changed: reaches all 88 variants" in report)
    assert report.count(f"[{edited}]") == min(len(want), 40)  # the per-variant rows (40 at most)
    assert changed_files(ldiff) == {edited: tuple(want)}
    annotations = check_output("github", ldiff, [], "templates/prompts.lock.json", head_result, prefix="templates")
    assert annotations.startswith(f"::error file=templates/{edited},")
    assert f"this change reaches {len(want)} variant" in annotations and annotations.count("::error") == 1

    # The site's Changes page: with a git base and with the lock as base (the same Diffs).
    assert {g.changed_sources for g in diff.groups} == {(key,)}
    assert {f.path: len(diff.files_to_variants()[f.path]) for f in diff.files} == {edited: len(want)}
    # ... and each changed variant's page ("Changes since base") names it for every changed part.
    assert sorted(c.id for c in diff.changed) == want
    assert all(sources == (key,) for c in diff.changed for *_, sources in site_changes.variant_parts(diff, c))
    assert ldiff.groups and all({_key(s) for s in g.changed_sources} == {key} for g in ldiff.groups)
    assert all(g.diff is None and g.before_text is None for g in ldiff.groups)  # a lock has no text


def test_a_one_mode_edit_through_git_fits_on_one_screen(tmp_path, capsys) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(TEMPLATES, repo / "templates")
    git(repo.parent, "init", "-q", str(repo))
    commit(repo, "base")
    _append(repo / "templates/modes/plan.md", "List the risks you see, one line each.")
    commit(repo, "plan: risks")
    code = main(["--cache-dir", str(tmp_path / "cache"), "diff", "HEAD~1", "HEAD", "--spec", str(repo / "templates"), "--format", "markdown"])
    out = capsys.readouterr().out
    assert code == 0
    # What GitHub shows before any click: everything outside the collapsed blocks.
    visible = re.sub(r"(?s)<details>.*?</details>\n?", "", out)
    lines = visible.strip("\n").splitlines()
    assert len(lines) <= 45, visible
    assert re.search(r"\*\*24 of 88 variants changed; Δ per variant \+\d+(…\+\d+)? tokens; largest Δ \+\d+ tokens", visible)
    assert "total Δ" not in visible  # never a sum over variants
    (item,) = [line for line in lines if line.startswith("- **c")]
    assert "24 of 88 variants — mode &#61; plan &#40;all models&#41;" in item
    assert "changed: <code>modes/plan.md</code>" in item
    assert "<details open>" in visible and "```diff" in visible
    assert "+List the risks you see, one line each." in visible
    assert "--- base: section collaboration_mode <collaboration_mode>" in visible
    assert "No newline" not in out
