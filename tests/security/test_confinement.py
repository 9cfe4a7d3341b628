"""F1, F14, F15: what a spec may read.  The hidden-file and credential rules
hold for the file actually opened (after symlinks), at the spec folder as at
a root; every string obeys the file rule however it was written; and one spec
reads a bounded total."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _attack import cli, git, one_error_line, repo_with_spec, run_main, small_spec
from promptspec.errors import SpecError
from promptspec.spec.readers.load import load_spec

TOKEN = "AUTHORIZATION: basic FAKE-TOKEN"


def _leak_fragment(ref: str) -> dict:
    return {"leak": {"description": "x", "role": "developer", "slot": "developer_extensions", "text": "{{ text('" + ref + "') }}"}}


def test_symlink_inside_a_repo_root_to_git_config_is_refused_end_to_end(tmp_path: Path) -> None:
    """F1 reproduction 1: `roots: {repo: ..}` + templates/gitcfg.md -> ../.git/config,
    through `diff --format markdown` (the PR comment)."""
    repo = repo_with_spec(tmp_path / "repo")
    git(repo, "config", "http.https://github.com/.extraheader", TOKEN)
    spec = repo / "templates"
    (spec / "gitcfg.md").symlink_to("../.git/config")
    text = (spec / "spec.yaml").read_text() + "roots:\n  repo: ..\n"
    (spec / "spec.yaml").write_text(text)
    (spec / "fragments" / "leak.yaml").write_text(json.dumps(_leak_fragment("@repo/templates/gitcfg.md")["leak"]))
    proc = cli("diff", "HEAD", "--spec", str(spec), "--format", "markdown", cwd=repo)
    assert "FAKE-TOKEN" not in proc.stdout + proc.stderr
    assert "hidden file" in one_error_line(proc)


def test_root_above_home_and_symlink_into_ssh_is_refused(tmp_path: Path) -> None:
    """F1 reproduction 2: `roots: {h: /home}` + a symlink to /home/runner/.ssh/id_rsa."""
    homes = tmp_path / "h"
    runner = homes / "runner"
    (runner / ".ssh").mkdir(parents=True)
    (runner / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    spec = small_spec(runner / "work" / "spec", spec={"roots": {"h": str(homes)}}, fragments=_leak_fragment("@h/runner/work/spec/key.md"))
    (spec / "key.md").symlink_to(runner / ".ssh" / "id_rsa")
    # As the runner: a root above the home folder is refused outright.
    proc = cli("render", "--spec", str(spec), env={"HOME": str(runner)})
    assert "PRIVATE KEY" not in proc.stdout
    assert "may not be read by a spec" in one_error_line(proc)
    # As someone else (the root is allowed): the symlink resolves into .ssh, a hidden folder.
    proc = cli("render", "--spec", str(spec), env={"HOME": str(tmp_path / "elsewhere")})
    assert "PRIVATE KEY" not in proc.stdout
    assert "symlink to a hidden file" in one_error_line(proc)


def test_spec_at_repo_top_cannot_read_git_config(tmp_path: Path) -> None:
    """F1 reproduction 3: no roots at all, the spec folder is the repository top."""
    spec = small_spec(tmp_path / "top", fragments=_leak_fragment(".git/config"))
    git(spec, "init", "-q")
    git(spec, "config", "http.https://github.com/.extraheader", TOKEN)
    proc = cli("render", "--spec", str(spec))
    assert "FAKE-TOKEN" not in proc.stdout
    assert "hidden file" in one_error_line(proc)
    # the same through a symlink with an innocent name
    (spec / "fragments" / "leak.yaml").write_text(json.dumps(_leak_fragment("cfg.md")["leak"]))
    (spec / "cfg.md").symlink_to(".git/config")
    proc = cli("render", "--spec", str(spec))
    assert "FAKE-TOKEN" not in proc.stdout
    assert "symlink to a hidden file" in one_error_line(proc)


def test_resolved_path_rule_is_in_specfs_itself(tmp_path: Path) -> None:
    """Siblings: any reader that goes through SpecFS (lint, AGENTS.md, includes) gets the rule."""
    from promptspec.spec.files import SpecFS

    root = tmp_path / "r"
    (root / ".secret").mkdir(parents=True)
    (root / ".secret" / "token").write_text("T\n")
    (root / "sub").mkdir()
    (root / "sub" / "x.md").symlink_to("../.secret/token")
    fs = SpecFS(tmp_path, {"r": root})
    for ref in ("@r/sub/x.md", "@r/.secret/token", "@r/./.secret/token"):
        with pytest.raises(SpecError, match="hidden"):
            fs.read_text(ref)


def test_import_codex_does_not_read_git_config_of_a_hostile_checkout(tmp_path: Path) -> None:
    """F1 reproduction 4: a checkout whose mode text is a symlink to .git/config
    with a token in the remote URL."""
    from promptspec.importers import codex_source as cs

    checkout = tmp_path / "codex"
    catalog = checkout / cs.CATALOG_PATHS[0]
    catalog.parent.mkdir(parents=True)
    catalog.write_text(json.dumps({"models": [{"slug": "m1", "context_window": 1000, "base_instructions": "Base.\n"}]}))
    git(checkout, "init", "-q")
    git(checkout, "remote", "add", "origin", "https://x-access-token:ghp_FAKE@example.invalid/o/r.git")
    name, _display = cs.MODES[0]
    mode = checkout / cs.MODE_DIRS[0] / f"{name}.md"
    mode.parent.mkdir(parents=True, exist_ok=True)
    mode.symlink_to(os.path.relpath(checkout / ".git" / "config", mode.parent))
    proc = cli("import-codex", str(checkout), "--out", str(tmp_path / "out"))
    assert "hidden file" in one_error_line(proc)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "where, value",
    [("models.json", "line1\r\nline2"), ("models.json", "nul\u0000"), ("models.json", "esc\u001b[31m"), ("models.json", "x\ud800y"),
     ("scenario", "Hello\r\nCRLF"), ("scenario", "esc\x1b[2K"), ("description", "a\x00b")],
)
def test_control_characters_through_json_and_yaml_escapes_are_refused(tmp_path: Path, capsys, where: str, value: str) -> None:
    """F14 (and F12's lone surrogates): the file rule holds for escapes too."""
    if where == "models.json":
        spec = small_spec(tmp_path / "s", models=[{"slug": "m1", "context_window": 1000, "base_instructions": value}])
    elif where == "scenario":
        spec = small_spec(tmp_path / "s", spec={"scenario": {"who": value}})
    else:
        spec = small_spec(tmp_path / "s", spec={"personalities": {"default": {"description": value}}})
    line = one_error_line(run_main(capsys, "render", "--spec", str(spec)))
    assert " contains " in line and "\x1b" not in line and "\r" not in line


def test_template_literals_cannot_make_what_files_may_not_hold(tmp_path: Path, capsys) -> None:
    for literal in ("\\x1b[2J", "\\ud800", "\\r"):
        spec = small_spec(tmp_path / literal[1:4], files={"fragments/greeting.md": "{{ '" + literal + "' }}\n"})
        assert "template output contains" in one_error_line(run_main(capsys, "render", "--spec", str(spec)))


def test_total_size_budget(tmp_path: Path) -> None:
    """F15: sixty comment-only 8 MB bodies must not cost a gigabyte: the total read is capped."""
    from promptspec.spec.files import MAX_FILE_BYTES, MAX_SPEC_BYTES, SpecFS

    chunk = "{# " + "x" * (MAX_FILE_BYTES - 16) + " #}\n"
    for i in range(MAX_SPEC_BYTES // MAX_FILE_BYTES + 1):
        (tmp_path / f"b{i}.md").write_text(chunk)
    fs = SpecFS(tmp_path)
    with pytest.raises(SpecError, match="in total"):
        for i in range(MAX_SPEC_BYTES // MAX_FILE_BYTES + 1):
            fs.read_text(f"b{i}.md")


def test_fragments_folder_under_a_root_with_body_files(tmp_path: Path) -> None:
    """F12: `fragments: "@vendor/frags"` with `body:` was a ValueError (exit 3)."""
    vendor = tmp_path / "vendor"
    (vendor / "frags").mkdir(parents=True)
    (vendor / "frags" / "g.yaml").write_text("description: d\nrole: developer\nslot: developer_extensions\nbody: g.md\n")
    (vendor / "frags" / "g.md").write_text("From the vendor.\n")
    spec = small_spec(tmp_path / "s", spec={"roots": {"vendor": str(vendor)}, "fragments": "@vendor/frags"})
    proc = cli("render", "--spec", str(spec))
    assert proc.returncode == 0, proc.stderr
    assert "From the vendor." in proc.stdout
    assert load_spec(spec).fragments[0].name == "g"
