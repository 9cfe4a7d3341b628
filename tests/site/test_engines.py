"""The site with each engine: MkDocs, ProperDocs (the plugin unchanged) and
Zensical (the `build --out` folder), plus the in-place update mode watchers
need and the quiet environment dev.py runs the tools in.

ProperDocs and Zensical are test dependencies; where one does not install
(Zensical ships compiled wheels for some platforms only) its tests skip with
the reason."""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from promptspec import pipeline
from promptspec.cli import main
from promptspec.measure.counter import TokenCounter
from promptspec.site.output import out_folder
from promptspec.site.build import MARKER_FILE

from _helpers import MKDOCS_YML, REPO, TEMPLATES, mkdocs_build, mkdocs_config, run_cli, subprocess_env
from required import require

ENGINES_MD = REPO / "docs" / "engines.md"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _need(module: str, what: str) -> None:
    require(importlib.util.find_spec(module) is not None, f"{what} is not installed (a test extra: pip install -e '.[test]'; it may have no wheel for this platform)")


def _generator_free(html: str) -> str:
    return re.sub(r'<meta name="generator" content="[^"]*">', "", html)


def test_properdocs_builds_the_same_pages_as_mkdocs(tmp_path: Path, make_spec) -> None:
    _need("properdocs", "ProperDocs")
    spec = make_spec(fragments={"hello": {"role": "developer", "slot": "developer_extensions", "text": "Hello."}})
    cfg = mkdocs_config(tmp_path, spec, base="none")
    built = mkdocs_build(cfg)
    assert built.returncode == 0, built.stderr
    mk = tmp_path / "site"
    shutil.move(mk, tmp_path / "site-mkdocs")
    # Another engine's own command (its click group and plugin loading), in its own process.
    proc = subprocess.run([sys.executable, "-m", "properdocs", "build", "--strict", "-f", str(cfg)],
                          capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr
    pages = sorted(p.relative_to(tmp_path / "site-mkdocs") for p in (tmp_path / "site-mkdocs" / "prompts").rglob("*.html"))
    assert len(pages) > 5
    for rel in pages:
        a = (tmp_path / "site-mkdocs" / rel).read_text(encoding="utf-8")
        b = (tmp_path / "site" / rel).read_text(encoding="utf-8")
        assert _generator_free(a) == _generator_free(b), rel
    assert "ProperDocs" in re.search(r'<meta name="generator" content="([^"]*)"', (tmp_path / "site" / pages[0]).read_text(encoding="utf-8")).group(1)


@pytest.mark.slow
def test_properdocs_builds_the_embedded_site_strict(tmp_path: Path) -> None:
    _need("properdocs", "ProperDocs")
    proc = subprocess.run(
        [sys.executable, "-m", "properdocs", "build", "--strict", "-f", str(MKDOCS_YML), "-d", str(tmp_path / "site")],
        capture_output=True, text=True, env=subprocess_env(), cwd=REPO, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr
    for page in ("index.html", "explorer/index.html", "lint/index.html", "changes/index.html"):
        assert (tmp_path / "site" / "prompts" / page).is_file()
    assert "promptspec-explorer" in (tmp_path / "site" / "prompts" / "explorer" / "index.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# Zensical


def _recipe() -> str:
    """The zensical.toml of docs/engines.md, as documented."""
    text = ENGINES_MD.read_text(encoding="utf-8")
    m = re.search(r"<!-- zensical\.toml recipe[^>]*-->\n```toml\n(.*?)```", text, re.S)
    assert m, "docs/engines.md lost its zensical.toml recipe"
    return m.group(1)


@pytest.mark.slow
def test_zensical_builds_the_out_folder_strict_with_examples_expanded(tmp_path: Path) -> None:
    _need("zensical", "Zensical")
    (tmp_path / "zensical.toml").write_text(_recipe(), encoding="utf-8")
    out = tmp_path / "build" / "docs"
    built = run_cli(["build", "--spec", str(TEMPLATES), "--out", str(out), "--docs", str(REPO / "docs")])
    assert built.returncode == 0, built.stderr
    anatomy = (out / "guide" / "fragment-anatomy.md").read_text(encoding="utf-8")
    assert not re.search(r"^<!-- promptspec:", anatomy, re.M), "example markers left unexpanded"
    proc = subprocess.run([sys.executable, "-m", "zensical", "build", "--strict"], capture_output=True, text=True,
                          cwd=tmp_path, env=subprocess_env(NO_COLOR="1"), timeout=600)
    log = ANSI.sub("", proc.stdout + proc.stderr)
    assert proc.returncode == 0, log[-4000:]
    assert "Warning" not in log and "Error" not in log, log[-4000:]
    site = tmp_path / "build" / "site"
    assert (site / "prompts" / "explorer" / "index.html").is_file()
    # The example in the guide is the text the spec renders today.
    result = pipeline.run(TEMPLATES, counter=TokenCounter(tmp_path / "cache"))
    req = next(r for r in result.requests if r.variant.id == "harbor-5/default/default/workspace-write")
    text = next(s.text for _, _, s in req.sections if s.fragment == "environment_context")
    page = (site / "guide" / "fragment-anatomy" / "index.html").read_text(encoding="utf-8")
    assert "<environment_context>" in text
    assert html.escape(text) in page, "the example is not the spec's text, escaped"
    assert "<environment_context>" not in page
    # Explorer links carry the variant as a query, so no anchor check applies.
    variant_page = next((site / "prompts" / "variants").glob("*/index.html")).read_text(encoding="utf-8")
    assert "explorer/?variant=" in variant_page and "#variant=" not in variant_page


def test_docs_pages_may_not_shadow_generated_ones(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    (docs / "prompts").mkdir(parents=True)
    (docs / "prompts" / "index.md").write_text("# mine\n", encoding="utf-8")
    assert main(["build", "--spec", str(TEMPLATES), "--out", str(tmp_path / "out"), "--docs", str(docs), "--base", "none"]) == 2
    err = capsys.readouterr().err
    assert "prompts/index.md is where a generated page goes" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_bad_example_marker_stops_build_out_and_writes_nothing(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    # A malformed marker (an unknown part); one naming what the spec lacks is a note instead (examples.py).
    (docs / "index.md").write_text("# Home\n\n<!-- promptspec:example fragment=apps part=no_such_part -->\n", encoding="utf-8")
    assert main(["build", "--spec", str(TEMPLATES), "--out", str(tmp_path / "out"), "--docs", str(docs), "--base", "none"]) == 2
    err = capsys.readouterr().err
    assert f"{docs.as_posix()}/index.md:3:" in err and "no_such_part" in err
    assert not (tmp_path / "out").exists()


def test_docs_copy_skips_symlinks_and_hidden_files(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "img").mkdir(parents=True)
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    (docs / "img" / "a.png").write_bytes(b"\x89PNG")
    (docs / ".secret").write_text("x")
    (tmp_path / "outside.md").write_text("not for publishing")
    os.symlink(tmp_path / "outside.md", docs / "leak.md")
    files = out_folder.hand_written(docs, None, {"prompts/index.md": b""})
    assert files == {"index.md": b"# Home\n", "img/a.png": b"\x89PNG"}


# ---------------------------------------------------------------------------
# --in-place


def _snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for p in folder.rglob("*") if p.is_file()}


def test_in_place_rewrites_only_what_changed_and_removes_stale_files(tmp_path: Path, capsys) -> None:
    spec = shutil.copytree(TEMPLATES, tmp_path / "spec")
    out = tmp_path / "out"
    args = ["build", "--spec", str(spec), "--out", str(out), "--base", "none", "--in-place"]
    assert main(args) == 0
    first = _snapshot(out)
    assert MARKER_FILE in first and "prompts/index.md" in first
    # Nothing changed: nothing is rewritten.
    assert main(args) == 0
    assert "(0 written, 0 removed" in capsys.readouterr().out
    assert _snapshot(out) == first
    # An edit to one fragment rewrites the pages it reaches; a mode removed takes its pages with it.
    (spec / "fragments" / "realtime.md").write_text((spec / "fragments" / "realtime.md").read_text() + "One more line.\n")
    text = (spec / "spec.yaml").read_text()
    text = re.sub(r"  pair_programming:\n(    .*\n)+", "", text)
    (spec / "spec.yaml").write_text(text.replace("      mode: pair_programming\n", "      mode: plan\n"))
    (out / "prompts" / "stray.md").write_text("left by someone")
    assert main(args) == 0
    second = _snapshot(out)
    changed = {rel for rel in second if rel in first and second[rel][2] != first[rel][2]}
    kept = {rel for rel in second if rel in first and second[rel][2] == first[rel][2]}
    assert changed and kept
    assert all(second[rel][:2] == first[rel][:2] for rel in kept), "an unchanged file was rewritten"
    assert not [rel for rel in second if "pair_programming" in rel or "pair-programming" in rel]
    assert "prompts/stray.md" not in second
    assert {rel for rel in first if "pair_programming" in rel}, "the test's removal did not reach any page"
    # The result is what a fresh (swap) build writes.
    fresh = tmp_path / "fresh"
    assert main(["build", "--spec", str(spec), "--out", str(fresh), "--base", "none"]) == 0
    assert {k: v[2] for k, v in _snapshot(fresh).items()} == {k: v[2] for k, v in second.items()}
    assert not [p for p in out.rglob(".*") if p.name != MARKER_FILE], "temp files left behind"


def test_in_place_refuses_a_folder_it_did_not_write(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    assert main(["build", "--spec", str(TEMPLATES), "--out", str(out), "--base", "none", "--in-place"]) == 2
    assert "was not written by 'promptspec build'" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["mine.txt"]


def test_in_place_replaces_a_file_that_stands_where_a_folder_goes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER_FILE).write_text("x")
    (out / "prompts").write_text("a file, not a folder")
    update = out_folder.write_in_place({"prompts/index.md": b"# M\n", MARKER_FILE: b"y"}, out)
    assert (out / "prompts" / "index.md").read_bytes() == b"# M\n"
    assert update.written == ("prompts/index.md", MARKER_FILE)


# ---------------------------------------------------------------------------
# dev.py's environment


def _material_site(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Hi\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({"site_name": "x", "theme": {"name": "material"}}), encoding="utf-8")
    return tmp_path / "mkdocs.yml"


def test_dev_py_runs_the_tools_without_maintenance_banners(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO))
    import dev

    cfg = _material_site(tmp_path)
    plain = {k: v for k, v in os.environ.items() if k not in dev.QUIET}

    def build(env: dict[str, str]) -> str:
        # A subprocess on purpose: the banner is decided from the environment a process starts with.
        proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(cfg)], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return ANSI.sub("", proc.stdout + proc.stderr)

    monkeypatch.setattr(os, "environ", plain)
    quiet = dev.tool_env()
    loud = build(plain)
    def banner(log: str) -> bool:
        return "end of life" in log.lower() or "MkDocs 2" in log

    if not banner(loud):
        # Not a missing requirement: this Material release has no banner to silence.
        pytest.skip("this Material for MkDocs prints no maintenance banner")
    assert not banner(build(quiet))
