"""F11, F12, F16: what promptspec prints and where it writes.  Untrusted
names and lock strings are printed with control characters escaped (no
forged error lines, no GitHub workflow commands, no terminal escapes); bad
input and a refusing system give one line and exit 2; output folders are
never someone else's."""

from __future__ import annotations

import json
import os
from pathlib import Path


from _attack import cli, git, one_error_line, small_spec
from required import refusing_folder
from promptspec.errors import SpecError

FORGED = "x\n::error file=spec.yaml,line=1::FORGED\n\x1b[2J"


def _no_injection(text: str) -> None:
    assert "\x1b" not in text
    assert not any(line.lstrip().startswith("::") for line in text.splitlines()), text


def test_a_file_name_cannot_forge_error_lines(tmp_path: Path) -> None:
    spec = small_spec(tmp_path / "s")
    (spec / "fragments" / f"{FORGED}.yaml").write_text("description: d\nrole: developer\nslot: developer_extensions\ntext: hi\n")
    proc = cli("render", "--spec", str(spec))
    line = one_error_line(proc)  # one line: the newlines in the name are escaped
    _no_injection(proc.stderr)
    assert "\\u000a::error" in line and "\\u001b[2J" in line


def test_lock_strings_printed_by_check_are_not_workflow_commands(tmp_path: Path) -> None:
    spec = small_spec(tmp_path / "s")
    assert cli("lock", "--spec", str(spec)).returncode == 0
    lock = spec / "prompts.lock.json"
    data = json.loads(lock.read_text())
    entry = next(iter(data["variants"].values()))
    entry["sha256"] = "0" * 64  # the variant changed, so check lists its sections
    entry["sections"]["x\n::error file=README.md,line=1::Forged\n::add-mask::harbor\x1b[2K"] = entry["sections"].pop("greeting")
    lock.write_text(json.dumps(data))
    for fmt in ("text", "json"):
        proc = cli("check", "--spec", str(spec), "--format", fmt)
        assert proc.returncode == 1, proc.stderr
        _no_injection(proc.stdout)
        assert "add-mask" in proc.stdout  # shown, escaped, not dropped
        if fmt == "json":
            json.loads(proc.stdout)  # the escapes keep it valid JSON


def test_lint_prints_orphan_file_names_escaped(tmp_path: Path) -> None:
    spec = small_spec(tmp_path / "s")
    (spec / "fragments" / "orphan\x1b[2K\n::warning::x.md").write_text("unused\n")
    proc = cli("lint", "--spec", str(spec))
    assert "orphan" in proc.stdout
    _no_injection(proc.stdout)


def test_escape_controls() -> None:
    from promptspec.errors import escape_controls

    assert escape_controls("a\x1b[2Kb\u202ec\x9bd") == "a\\u001b[2Kb\\u202ec\\u009bd"
    assert escape_controls("one\ntwo") == "one\\u000atwo"
    assert escape_controls("ok\n::add-mask::x\n  ::error::y\n+::fine", newlines=True) == "ok\n\\::add-mask::x\n  \\::error::y\n+::fine"
    assert "\n" not in SpecError("bad", "dir/x\ny.md").oneline()


def test_build_out_dot_and_unwritable_places_are_one_line_errors(tmp_path: Path) -> None:
    """F12: `--out .` was `internal error: OSError: [Errno 16]`, exit 3."""
    spec = small_spec(tmp_path / "s")
    work = tmp_path / "work"
    work.mkdir()
    assert "current folder" in one_error_line(cli("build", "--spec", str(spec), "--out", ".", cwd=work))
    one_error_line(cli("build", "--spec", str(spec), "--out", "..", cwd=work))
    one_error_line(cli("build", "--spec", str(spec), "--out", str(refusing_folder(tmp_path) / "out")))  # one line, exit 2


def test_import_force_keeps_a_folder_that_is_not_an_import(tmp_path: Path) -> None:
    """F16: `import-codex --force` deleted a folder with a spec.yaml, its .git included."""
    from promptspec.importers import codex_source as cs

    checkout = tmp_path / "codex"
    catalog = checkout / cs.CATALOG_PATHS[0]
    catalog.parent.mkdir(parents=True)
    catalog.write_text(json.dumps({"models": [{"slug": "m1", "context_window": 1000, "base_instructions": "Base.\n"}]}))
    mine = small_spec(tmp_path / "mine")
    git(mine, "init", "-q")
    (mine / "notes.txt").write_text("keep me\n")
    assert "not an earlier import" in one_error_line(cli("import-codex", str(checkout), "--out", str(mine), "--force"))
    assert (mine / ".git").is_dir() and (mine / "notes.txt").read_text() == "keep me\n"
    # An earlier import is still replaced.
    out = tmp_path / "imported"
    assert cli("import-codex", str(checkout), "--out", str(out)).returncode == 0
    proc = cli("import-codex", str(checkout), "--out", str(out), "--force")
    assert proc.returncode == 0, proc.stderr


def test_build_out_symlink_keeps_the_link(tmp_path: Path) -> None:
    """F16: `build --out LINK` replaced the symlink by a real folder and left its target empty."""
    spec = small_spec(tmp_path / "s")
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    for _ in range(2):  # the second build replaces the first
        proc = cli("build", "--spec", str(spec), "--out", str(link))
        assert proc.returncode == 0, proc.stderr
        assert link.is_symlink() and os.readlink(link) == str(real)
        assert (real / ".promptspec-build").is_file() and (real / "prompts").is_dir()


def test_build_refuses_a_folder_holding_a_repository(tmp_path: Path) -> None:
    spec = small_spec(tmp_path / "s")
    out = tmp_path / "out"
    assert cli("build", "--spec", str(spec), "--out", str(out)).returncode == 0
    (out / ".git").mkdir()
    assert ".git" in one_error_line(cli("build", "--spec", str(spec), "--out", str(out)))
    assert (out / ".git").is_dir()
