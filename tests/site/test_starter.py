"""`promptspec site init`: a standalone site for one's own spec."""

from __future__ import annotations

from pathlib import Path

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


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_team_init_gives_an_own_spec_and_a_site_the_fragment_guide_works_in(tmp_path, capsys, monkeypatch):
    """`promptspec init DIR`: the example copied to DIR/templates (where the
    repository's commands look), a site for it, full paths printed; the
    guide's first steps then work on that copy and the site builds."""
    from promptspec.spec.embedded import embedded_spec

    out = tmp_path / "team"
    monkeypatch.chdir(tmp_path)
    assert main(["init", "team"]) == 0
    printed = capsys.readouterr().out
    assert f"created {out / 'templates'}/ " in printed and f"created {out / 'mkdocs.yml'}" in printed
    assert "next: cd " in printed and "git init" in printed
    assert _files(out / "templates") == _files(embedded_spec()) - {p for p in _files(embedded_spec()) if p.split("/")[-1].startswith(".")}
    cfg = yaml.safe_load((out / "mkdocs.yml").read_text(encoding="utf-8"))
    plugin = next(p["promptspec"] for p in cfg["plugins"] if isinstance(p, dict))
    assert plugin["spec"] == "templates"
    assert not any(p.name.startswith(".team.init-") for p in tmp_path.iterdir())  # the work folder is gone
    spec = str(out / "templates")
    assert main(["new", "fragment", "commit_messages", "--role", "developer", "--spec", spec]) == 0
    assert (out / "templates" / "fragments" / "commit_messages.yaml").is_file()
    assert not (embedded_spec() / "fragments" / "commit_messages.yaml").exists()
    assert main(["lint", "--spec", spec]) == 0
    proc = mkdocs_build(out / "mkdocs.yml")
    assert proc.returncode == 0, proc.stderr
    assert (out / "site" / "prompts" / "fragments" / "commit_messages" / "index.html").is_file()


def test_team_init_refuses_a_folder_that_is_not_empty(tmp_path, capsys):
    out = tmp_path / "repo"
    out.mkdir()
    (out / "README.md").write_text("ours\n")
    assert main(["init", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"promptspec: error: {out} is not empty; give a new or empty folder"]
    assert _files(out) == {"README.md"} and sorted(p.name for p in tmp_path.iterdir()) == ["repo"]


def test_site_init_adds_conformance_and_history_to_the_nav(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    report = tmp_path / "reports" / "conformance.json"
    report.parent.mkdir()
    report.write_text(json.dumps({"kind": "promptspec-verify-report", "version": 2, "codex_release": "0.125.0", "spec": "x",
                                  "date": "2026-12-01", "matrix_size": 88, "compared": 0, "identical": 0, "variants": []}))
    (tmp_path / "old").symlink_to(TEMPLATES)
    assert main(["site", "init", "site", "--spec", str(TEMPLATES), "--conformance", "reports/conformance.json",
                 "--history", "dir:old,label=1.0,date=2026-01-02", "--history", f"dir:{TEMPLATES},label=2.0"]) == 0
    cfg = yaml.safe_load((tmp_path / "site" / "mkdocs.yml").read_text(encoding="utf-8"))
    plugin = next(p["promptspec"] for p in cfg["plugins"] if isinstance(p, dict))
    assert plugin["conformance"] == "../reports/conformance.json"  # relative to mkdocs.yml, as the plugin reads it
    assert plugin["history"] == [{"side": "dir:../old", "label": "1.0", "date": "2026-01-02"},
                                 {"side": f"dir:{TEMPLATES}", "label": "2.0"}]
    prompts = cfg["nav"][1]["Prompts"]
    assert prompts[-2:] == [{"Conformance": "prompts/conformance.md"}, {"History": "prompts/history/index.md"}]
    proc = mkdocs_build(tmp_path / "site" / "mkdocs.yml")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "site" / "prompts" / "conformance" / "index.html").is_file()
    assert (tmp_path / "site" / "site" / "prompts" / "history" / "index.html").is_file()


def test_site_init_next_step_has_no_cd_dot(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["site", "init", ".", "--spec", str(TEMPLATES)]) == 0
    assert "next: mkdocs serve" in capsys.readouterr().out
