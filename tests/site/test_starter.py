"""`promptspec site init`: a standalone site for one's own spec."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from promptspec.cli import main

from _helpers import REPO, TEMPLATES, cli, mkdocs_build
from required import needs

CODEX_FIXTURE = REPO.parent / "shared" / "fixtures" / "codex"


def test_init_writes_a_config_for_the_spec_with_the_nav_in_reading_order(tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["site", "init", str(out), "--spec", str(TEMPLATES)]) == 0
    cfg = yaml.safe_load((out / "mkdocs.yml").read_text(encoding="utf-8"))
    plugin = next(p["promptspec"] for p in cfg["plugins"] if isinstance(p, dict))
    assert (out / plugin["spec"]).resolve() == TEMPLATES.resolve()  # relative to the site folder
    assert not Path(plugin["spec"]).is_absolute()
    assert cfg["site_name"] == "Harbor example agent"
    assert [s["scheme"] for s in cfg["theme"]["palette"]] == ["default", "slate"]
    assert cfg["theme"]["font"] is False
    prompts = [next(iter(e)) for e in cfg["nav"][1]["Prompts"]]
    assert prompts == ["Matrix", "Explorer", "Models", "Personalities", "Modes", "sandbox_mode", "Fragments", "Tools", "Assembly", "Lint", "Changes"]
    assert "<!-- promptspec:assembly -->" in (out / "docs" / "index.md").read_text(encoding="utf-8")
    assert "wrote " in capsys.readouterr().out


def test_init_overwrites_nothing_and_needs_a_spec(tmp_path, capsys):
    out = tmp_path / "site"
    (out / "docs").mkdir(parents=True)
    (out / "docs" / "index.md").write_text("mine\n")
    assert main(["site", "init", str(out), "--spec", str(TEMPLATES)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"promptspec: error: {out / 'docs' / 'index.md'} already exists; choose an empty DIR or remove it"]
    assert (out / "docs" / "index.md").read_text() == "mine\n" and not (out / "mkdocs.yml").exists()
    assert main(["site", "init", str(tmp_path / "other")]) == 2
    assert "holds no spec.yaml; give the spec folder with --spec SPEC" in capsys.readouterr().err


@needs((CODEX_FIXTURE / "codex-rs").is_dir(), f"Codex fixture not found at {CODEX_FIXTURE} (../shared beside the repository)")
def test_the_imported_codex_fixture_builds_as_a_standalone_site(tmp_path):
    """The recipe of the README: import, init, `mkdocs build --strict`."""
    spec = tmp_path / "codex-spec"
    proc = cli("import-codex", str(CODEX_FIXTURE), "--out", str(spec))
    assert proc.returncode == 0, proc.stderr
    site = tmp_path / "codex-site"
    proc = cli("site", "init", str(site), "--spec", str(spec))
    assert proc.returncode == 0, proc.stderr
    proc = mkdocs_build(site / "mkdocs.yml")
    assert proc.returncode == 0, proc.stderr
    built = site / "site"
    home = (built / "index.html").read_text(encoding="utf-8")
    assert '<figure class="ps-flow"' in home and "ps-missing" not in home  # the live layout diagram
    variants = [p for p in (built / "prompts" / "variants").iterdir() if p.is_dir()]
    assert variants
    assert 'class="mermaid"' not in (variants[0] / "index.html").read_text(encoding="utf-8")
