"""One rule for which spec a command uses (spec/locate.py), and the gate rule
for [tool.promptspec] (SECURITY.md, R1): tried in a team's own git repository,
in-process, as a new user would."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from promptspec.cli import main
from promptspec.spec import load_spec
from promptspec.spec.embedded import embedded_spec

from _helpers import TEMPLATES
from required import require_program

TEAM = "Team spec of the rule test"


def _git(repo: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": "/usr/bin:/bin", "HOME": str(repo)})


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repository whose templates/ is the team's own spec: the
    example with its models renamed (harbor-* -> team-*), so any command that
    reads the embedded example instead shows the wrong slugs."""
    require_program("git", "apt-get install git")
    repo = tmp_path / "team"
    shutil.copytree(TEMPLATES, repo / "templates", ignore=shutil.ignore_patterns("prompts.lock.json"))
    spec = repo / "templates"
    text = (spec / "spec.yaml").read_text(encoding="utf-8")
    (spec / "spec.yaml").write_text(text.replace("name: Harbor example agent", f"name: {TEAM}"), encoding="utf-8")
    for path in (p for p in spec.rglob("*") if p.is_file()):
        t = path.read_text(encoding="utf-8")
        if "harbor-" in t:
            path.write_text(t.replace("harbor-", "team-"), encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "team spec")
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")
    monkeypatch.delenv("PROMPTSPEC_CACHE_DIR", raising=False)
    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "cache"))
    return repo


def _load_ok(root: Path) -> bool:
    try:
        load_spec(root)
        return True
    except Exception:  # noqa: BLE001 - the fixture's edit must keep it loadable
        return False


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_team_spec_loads(team: Path) -> None:
    assert _load_ok(team / "templates"), "the fixture's team spec must load"


COMMANDS = [
    ["list", "--format", "json"],
    ["render", "--format", "json"],
    ["lint", "--format", "json"],
    ["compare", "team-5/pragmatic/default/workspace-write", "personality=friendly"],
    ["diff", "HEAD"],
    ["history", "HEAD", "dir:../templates"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_every_command_without_spec_uses_the_repository_spec(team: Path, capsys, argv: list[str]) -> None:
    code, out, err = run(capsys, "-v", *argv)
    assert code in (0, 1), err
    assert "promptspec: spec: ../templates (templates/ of the git repository" in err, err
    assert "harbor-5" not in out  # the example's models never show up


def test_render_and_list_show_the_team_model(team: Path, capsys) -> None:
    code, out, _ = run(capsys, "render", "--format", "json")
    assert code == 0 and json.loads(out)["model"].startswith("team-")
    code, out, _ = run(capsys, "list", "--format", "json")
    assert code == 0 and all(v["model"].startswith("team-") for v in json.loads(out)["variants"])


def test_lock_check_build_explore_and_new_stay_in_the_repository(team: Path, tmp_path: Path, capsys) -> None:
    before = sorted(p.relative_to(embedded_spec()) for p in embedded_spec().rglob("*"))
    assert run(capsys, "lock")[0] == 0
    assert (team / "templates" / "prompts.lock.json").is_file()
    code, out, err = run(capsys, "check")
    assert code == 0, err
    code, out, err = run(capsys, "new", "fragment", "commit_messages", "--role", "developer")
    assert code == 0, err
    made = team / "templates" / "fragments" / "commit_messages.yaml"
    assert made.is_file() and f"created {made.resolve()}" in out
    assert run(capsys, "build", "--out", str(tmp_path / "site"))[0] == 0
    assert TEAM in (tmp_path / "site" / "prompts" / "index.md").read_text(encoding="utf-8")
    assert run(capsys, "explore", "--out", str(tmp_path / "explorer"))[0] == 0
    assert "team-5" in "".join(p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "explorer").rglob("*.js*"))
    after = sorted(p.relative_to(embedded_spec()) for p in embedded_spec().rglob("*"))
    assert after == before, "nothing may be written into the embedded example"


def test_outside_a_repository_new_and_lock_refuse_the_example(tmp_path: Path, monkeypatch, capsys) -> None:
    here = tmp_path / "nowhere"
    here.mkdir()
    monkeypatch.chdir(here)
    before = sorted(embedded_spec().rglob("*"))
    code, _, err = run(capsys, "new", "fragment", "stray", "--role", "developer")
    assert code == 2 and "would write into the embedded example spec" in err and err.count("\n") == 1
    code, _, err = run(capsys, "lock")
    assert code == 2 and "would write into the embedded example spec" in err
    assert sorted(embedded_spec().rglob("*")) == before
    code, _, err = run(capsys, "-v", "list")
    assert code == 0 and "the embedded example: not inside a git repository" in err


def _pyproject(repo: Path, table: str) -> None:
    (repo / "pyproject.toml").write_text(f'[project]\nname = "team"\n\n[tool.promptspec]\n{table}', encoding="utf-8")


def test_a_pull_requests_pyproject_cannot_redirect_a_gate(team: Path, capsys) -> None:
    """R1: the PR adds `spec = "decoy"`; check and diff refuse instead of judging the decoy."""
    assert run(capsys, "lock")[0] == 0
    shutil.copytree(team / "templates", team / "decoy")  # a decoy whose lock matches it
    (team / "templates" / "fragments" / "permissions.yaml").write_text(
        (team / "templates" / "fragments" / "permissions.yaml").read_text(encoding="utf-8").replace("description:", "description: changed", 1),
        encoding="utf-8")
    _pyproject(team, 'spec = "decoy"\n')
    for argv in (["check"], ["diff", "HEAD", "--fail-on-increase", "1"], ["lint"], ["history", "HEAD", "dir:../templates"]):
        code, _, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert "does not take from a file the pull request controls" in err and "pyproject.toml" in err
    # Told explicitly, the gate takes the file; a non-gate takes it anyway.
    code, _, err = run(capsys, "--project-config", "-v", "lint", "--format", "json")
    assert code in (0, 1) and "spec in [tool.promptspec]" in err and "decoy" in err
    code, _, err = run(capsys, "-v", "list")
    assert code == 0 and "decoy" in err


def test_a_gate_ignores_the_files_budget_and_says_so(team: Path, capsys) -> None:
    _pyproject(team, "budget = 100000000\n")
    code, out, err = run(capsys, "diff", "HEAD", "--format", "json")
    assert code == 0
    assert "ignores [tool.promptspec] budget" in err


def test_a_token_cache_inside_the_work_tree_is_refused(team: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("PROMPTSPEC_CACHE_DIR", raising=False)
    _pyproject(team, 'cache_dir = "cache"\n')
    code, _, err = run(capsys, "list")
    assert code == 2 and "is inside the git work tree" in err and "pyproject.toml:5" in err
    # The environment the workflow set wins over the file.
    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(team.parent / "trusted-cache"))
    assert run(capsys, "list")[0] == 0
    assert not (team / "cache").exists()
