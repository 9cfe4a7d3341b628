"""Which spec folder a command works on, by one rule for every command.

1. `--spec DIR`, when given;
2. else `spec` in `[tool.promptspec]` of the nearest pyproject.toml, for the
   commands that may take defaults from it (gates do not, unless told: the
   file comes with the pull request they judge; see SECURITY.md);
3. else `templates/` at the top of the git repository around the current
   folder, when it holds a spec.yaml;
4. else the embedded example.

The rule lives here, once, because it used to differ by command (`diff` and
`check` looked in the repository, `lint`, `render` and `new` took the example),
so in a team's repository `lint --strict` said "no findings" about the wrong
spec and `new fragment` wrote into the installed package.  A spec reached by
falling back to the example is read-only: `new` and `lock` refuse it rather
than write into the package (or into promptspec's own example).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .embedded import PACKAGED, embedded_spec
from .model import SPEC_FILE

REPO_SPEC = "templates"
"""The repository's spec folder, at the top of its git work tree."""


@dataclass(frozen=True)
class SpecChoice:
    """A spec folder and why it was chosen (shown with `-v`)."""

    path: Path
    reason: str  # "--spec", "pyproject.toml", "repository", "example"
    detail: str

    @property
    def is_example(self) -> bool:
        return _same(self.path, embedded_spec()) or _same(self.path, PACKAGED)

    def describe(self) -> str:
        return f"{self.path} ({self.detail})"

    def check_writable(self, what: str) -> None:
        """Refuse to write into the installed package, or into the example
        when the rule only fell back to it (an explicit --spec is a choice)."""
        packaged = _same(self.path, PACKAGED) or PACKAGED in self.path.resolve().parents
        if packaged or (self.is_example and self.reason != "--spec"):
            where = "the installed package's example spec" if packaged else "the embedded example spec"
            raise UsageError(
                f"{what} would write into {where} ({self.path}), which promptspec never changes; "
                "copy it into a folder of your own (promptspec init DIR) and pass --spec DIR, "
                f"or run inside a git repository whose {REPO_SPEC}/ holds your spec"
            )


def locate(explicit: Path | None, *, configured: Path | None = None, configured_in: Path | None = None,
           cwd: Path | None = None) -> SpecChoice:
    """The spec folder by the rule above; `configured` is [tool.promptspec]'s
    `spec` (already resolved against its file), passed only when the command
    may take it."""
    if explicit is not None:
        return SpecChoice(Path(explicit), "--spec", "from --spec")
    if configured is not None:
        return SpecChoice(Path(configured), "pyproject.toml", f"spec in [tool.promptspec] of {configured_in}")
    top = repository_top(cwd)
    if top is not None and (top / REPO_SPEC / SPEC_FILE).is_file():
        return SpecChoice(_relative(top / REPO_SPEC), "repository", f"{REPO_SPEC}/ of the git repository {top}")
    where = f"no {REPO_SPEC}/{SPEC_FILE} in the git repository {top}" if top is not None else "not inside a git repository"
    return SpecChoice(embedded_spec(), "example", f"the embedded example: {where} and no --spec")


def repository_top(cwd: Path | None = None) -> Path | None:
    """The top of the git work tree around `cwd`: the nearest folder holding
    `.git` (a folder, or a file in a worktree or submodule).  Read from the
    file system rather than by running git, so the rule holds where git is
    not installed and costs nothing."""
    start = Path(cwd or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _relative(path: Path) -> Path:
    try:
        return Path(os.path.relpath(path))
    except ValueError:  # another drive on Windows
        return path


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
