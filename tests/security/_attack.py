"""Shared pieces of the attack tests: a small spec, git repositories with
crafted objects, and running the CLI in a child process under a memory and
time limit (an attack that worked on the old code must fail the test, not
take the test run down with it)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from conftest import write_spec

MEMORY_LIMIT = 1024 * 1024 * 1024  # 1 GB of address space: /dev/zero read whole blows through it
TIME_LIMIT = 60  # seconds: a FIFO read hangs forever, a bounded read takes well under a second


def small_spec(root: Path, **kwargs) -> Path:
    """The corpus-style minimal spec: one model, one body-file fragment."""
    files = {"fragments/greeting.md": "Hello {{ who }}.\n", **kwargs.pop("files", {})}
    spec = {"scenario": {"who": "world"}, **kwargs.pop("spec", {})}
    fragments = {"greeting": {"description": "A greeting.", "role": "developer", "slot": "developer_extensions", "body": "greeting.md"}}
    fragments.update(kwargs.pop("fragments", {}))
    return write_spec(root, spec=spec, fragments=fragments, files=files, **kwargs)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def cli(*args: str, cwd: Path | None = None, timeout: float = TIME_LIMIT, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    """`promptspec ARGS` in a child with 1 GB of memory; a hang raises TimeoutExpired."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from promptspec.cli import main; sys.exit(main(sys.argv[1:]))", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, preexec_fn=_limits,
        env={**os.environ, **(env or {})}, errors="surrogateescape",
    )


def python(code: str, *, timeout: float = TIME_LIMIT) -> subprocess.CompletedProcess[str]:
    """Python code in a child under the same limits (for library calls that used to hang or explode)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, preexec_fn=_limits)


def run_main(capsys, *args: str) -> subprocess.CompletedProcess[str]:
    """`promptspec ARGS` in this process (for attacks that cannot hang or
    exhaust it): the same result shape as `cli`, without a Python start-up."""
    from promptspec.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single `promptspec: error:` line of a failed run (asserts the contract)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptspec: error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


# ---------------------------------------------------------------------------
# git


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True, env=env).stdout


def repo_with_spec(root: Path, **spec_kwargs) -> Path:
    """A git repository with a spec at templates/, committed on branch main."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    small_spec(root / "templates", **spec_kwargs)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root
