"""Conventions of a Python command line: `python -m promptspec`, `schema`,
shell completion, defaults from [tool.promptspec] in pyproject.toml, and the
token cache in the platform's user cache folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import promptspec
from promptspec.cli import main
from promptspec.cli.commands import fill_defaults
from promptspec.spec.schemas import KINDS, schema_path
from promptspec.util import project_config

from _helpers import TEMPLATES, subprocess_env
from required import require_program


def test_python_m_promptspec_runs_the_cli(tmp_path: Path) -> None:
    # Subprocesses on purpose: `python -m promptspec` itself is what is tested.
    proc = subprocess.run([sys.executable, "-m", "promptspec", "--version"], capture_output=True, text=True, cwd=tmp_path, env=subprocess_env())
    assert (proc.returncode, proc.stdout) == (0, f"promptspec {promptspec.__version__}\n")
    proc = subprocess.run([sys.executable, "-m", "promptspec", "lint", "--spec", str(tmp_path)], capture_output=True, text=True, env=subprocess_env())
    assert proc.returncode == 2 and proc.stderr.startswith("promptspec: error: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("kind", [*KINDS, "mode", "personality"])
def test_schema_prints_each_kind(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", kind]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed)["$schema"].startswith("https://json-schema.org/")
    assert printed == schema_path(kind).read_text(encoding="utf-8")
    assert main(["schema", kind, "--path"]) == 0
    assert Path(capsys.readouterr().out.strip()) == schema_path(kind)


def test_schema_defaults_to_spec_and_refuses_unknown_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "promptspec spec.yaml"
    assert main(["schema", "tool-ish"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("promptspec: error: unknown schema kind 'tool-ish'") and err.count("\n") == 1


def test_bash_completion_registers_and_knows_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "promptspec.bash"
    script.write_text(capsys.readouterr().out)
    for command in ("list", "render", "build", "lint", "diff", "schema", "completion"):
        assert command in script.read_text()
    bash = require_program("bash", "apt-get install bash")
    proc = subprocess.run([bash, "-c", f"source {script} && complete -p promptspec"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "promptspec" in proc.stdout


def test_zsh_completion_is_a_compdef(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "zsh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#compdef promptspec")
    zsh = require_program("zsh", "apt-get install zsh; .ci/run installs it")
    assert subprocess.run([zsh, "-n", "-c", out]).returncode == 0


# ---------------------------------------------------------------------------
# [tool.promptspec]


def _project(tmp_path: Path, table: str) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(TEMPLATES, root / "prompts" / "spec")
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.promptspec]\n{table}', encoding="utf-8")
    (root / "sub" / "deeper").mkdir(parents=True)
    return root


def test_the_spec_comes_from_the_nearest_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path, 'spec = "prompts/spec"\n')
    # The pyproject's spec has one model fewer than the embedded one, so which was read shows in `list`.
    catalog = root / "prompts" / "spec" / "models.json"
    data = json.loads(catalog.read_text(encoding="utf-8"))
    dropped = data["models"].pop()["slug"]
    catalog.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.chdir(root / "sub" / "deeper")
    assert main(["--project-config", "list", "--format", "json"]) == 0  # a command takes it only when told
    models = {v["model"] for v in json.loads(capsys.readouterr().out)["variants"]}
    assert models == {m["slug"] for m in data["models"]} and dropped not in models
    args = _parsed(["list"])
    assert fill_defaults(args).spec == root / "prompts" / "spec"
    # The command line wins.
    args = _parsed(["list", "--spec", str(TEMPLATES)])
    assert fill_defaults(args).spec is None


def _parsed(argv: list[str]):
    from promptspec.cli import build_parser

    return build_parser().parse_args(argv)


def test_every_key_reaches_its_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path, 'spec = "prompts/spec"\nbase = "none"\nbudget = 12000\nfail_on_increase = "5%"\ncache_dir = ".cache/ps"\n')
    monkeypatch.chdir(root / "sub")
    monkeypatch.delenv("PROMPTSPEC_CACHE_DIR", raising=False)
    args = _parsed(["diff", "HEAD"])
    assert fill_defaults(args).spec == root / "prompts" / "spec"
    assert (args.budget, args.fail_on_increase, args.cache_dir, args.base) == (12000, "5%", root / ".cache/ps", "HEAD")
    args = _parsed(["build", "--out", "x"])
    fill_defaults(args)
    assert args.base == "none"
    args = _parsed(["build", "--out", "x", "--base", "lock"])
    fill_defaults(args)
    assert args.base == "lock"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('spec = "a"\nbudjet = 5\n', r"pyproject\.toml:6: unknown key 'budjet' in \[tool\.promptspec\] \(allowed keys: spec, base"),
        ("budget = \"many\"\n", r"pyproject\.toml:5: \[tool\.promptspec\] budget must be a whole number of tokens"),
        ("budget = true\n", r"pyproject\.toml:5: \[tool\.promptspec\] budget must be"),
        ("spec = [\n", r"pyproject\.toml:\d+: invalid TOML: "),
    ],
)
def test_a_bad_table_is_one_line_with_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, table: str, message: str) -> None:
    import re

    root = _project(tmp_path, table)
    monkeypatch.chdir(root)
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.match(r"promptspec: error: .*" + message, err), err


def test_no_pyproject_means_no_defaults(tmp_path: Path) -> None:
    # A folder with no pyproject.toml on the way up (tmp_path's parents hold none either).
    assert not any((p / "pyproject.toml").exists() for p in (tmp_path, *tmp_path.parents))
    config = project_config.load(tmp_path)
    assert config.path is None and project_config.find(tmp_path) is None
    assert dict(config.values) == {}


# ---------------------------------------------------------------------------
# Token cache folder


def test_the_token_cache_is_in_the_platform_user_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import platformdirs

    from promptspec.measure.counter import default_cache_dir

    monkeypatch.delenv("PROMPTSPEC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == Path(platformdirs.user_cache_dir("promptspec", appauthor=False))
    if sys.platform.startswith("linux"):
        assert default_cache_dir() == tmp_path / "xdg" / "promptspec"
    monkeypatch.setenv("PROMPTSPEC_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"


def test_a_broken_pyproject_without_our_table_is_not_our_business(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project\nname = \n", encoding="utf-8")
    assert project_config.load(tmp_path).values == {}
    (tmp_path / "pyproject.toml").write_text("[tool.promptspec]\nspec = \n", encoding="utf-8")
    with pytest.raises(promptspec.PromptspecError, match="invalid TOML"):
        project_config.load(tmp_path)


def test_the_library_reads_defaults_without_touching_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """apply_defaults takes the names of the unset options and returns the
    values; only the CLI (fill_defaults) sets them on its arguments."""
    root = _project(tmp_path, 'budget = 12000\nbase = "none"\nfail_on_increase = "5%"\n')
    found = project_config.apply_defaults(["budget", "base"], root / "sub", command="diff")
    assert dict(found.values) == {"budget": 12000}  # base only for build; fail_on_increase was given
    assert dict(project_config.apply_defaults(["base"], root / "sub", command="build").values) == {"base": "none"}
    assert project_config.apply_defaults(["budget"], root / "sub", trusted=False).ignored == ("budget",)
    assert project_config.apply_defaults([], root / "sub").config.path is None  # nothing to fill: no file read
