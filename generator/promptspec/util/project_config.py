"""Defaults for the command line from `[tool.promptspec]` in pyproject.toml.

A repository that keeps its spec somewhere other than `templates/`, or
always compares with `origin/main`, says so once instead of in every command
and CI step::

    [tool.promptspec]
    spec = "prompts/spec"          # relative to the pyproject.toml's folder
    base = "origin/main"           # build's Changes page (diff takes BASE as an argument)
    budget = 12000                 # diff --budget
    fail_on_increase = "5%"        # diff --fail-on-increase
    cache_dir = ".cache/promptspec"

The nearest pyproject.toml from the current folder upwards is read; a
command-line option always wins. A mistake is one line naming the file and
line, like every other error.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import SpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FILE = "pyproject.toml"
KEYS: Mapping[str, tuple[type | tuple[type, ...], str]] = {
    "spec": (str, "a folder path"),
    "base": (str, "lock, none, a git revision or a spec folder"),
    "budget": (int, "a whole number of tokens"),
    "fail_on_increase": ((int, str), "N or N%"),
    "cache_dir": (str, "a folder path"),
}
PATH_KEYS = ("spec", "cache_dir")
MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ProjectConfig:
    path: Path | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""  # the file as read, for the line of a key in a later error

    def get(self, key: str) -> Any:
        return self.values.get(key)


def find(start: Path) -> Path | None:
    """The nearest pyproject.toml in `start` or a folder above it."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / FILE
        if candidate.is_file():
            return candidate
    return None


def _line(text: str, key: str) -> int | None:
    """Line of `key = ...` inside [tool.promptspec] (tomllib keeps no lines)."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = re.fullmatch(r"\[\s*tool\s*\.\s*promptspec\s*\]", stripped.split("#")[0].strip()) is not None
        elif inside and re.match(rf"[\"']?{re.escape(key)}[\"']?\s*=", stripped):
            return number
    return None


def load(start: Path | None = None) -> ProjectConfig:
    path = find(start or Path.cwd())
    if path is None:
        return ProjectConfig()
    shown = str(path)
    try:
        # pyproject.toml comes with the checkout (a pull request's): it may be a
        # FIFO or a link to /dev/zero, so the same bounded, non-blocking read
        # as spec/files.py's (util may not import spec).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb", buffering=0) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise SpecError(f"{FILE} is not a regular file", shown)
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise SpecError(f"cannot read {FILE}: {exc.strerror or exc}", shown) from None
    if len(raw) > MAX_BYTES:
        raise SpecError(f"{FILE} is larger than {MAX_BYTES} bytes", shown)
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise SpecError(f"{FILE} is not UTF-8", shown) from None
    except tomllib.TOMLDecodeError as exc:
        if "promptspec" not in text:
            return ProjectConfig(path)  # someone else's broken file: not ours to refuse
        match = re.search(r"line (\d+)", str(exc))
        line = int(match.group(1)) if match else text.count("\n") + 1  # "at end of document"
        raise SpecError(f"invalid TOML: {str(exc).split(' (at')[0]}", shown, line=line, hint="fix the TOML syntax") from None
    table = data.get("tool", {}).get("promptspec") if isinstance(data.get("tool"), dict) else None
    if table is None:
        return ProjectConfig(path)
    if not isinstance(table, dict):
        raise SpecError("[tool.promptspec] must be a table", shown, line=_line(text, "promptspec"))
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            raise SpecError(f"unknown key '{key}' in [tool.promptspec]", shown, line=_line(text, key), hint=f"allowed keys: {', '.join(KEYS)}")
        types, what = KEYS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise SpecError(f"[tool.promptspec] {key} must be {what}", shown, line=_line(text, key))
        if key in PATH_KEYS:
            value = path.parent / value
        values[key] = str(value) if key == "fail_on_increase" else value
    return ProjectConfig(path, values, text)


CACHE_ENV = "PROMPTSPEC_CACHE_DIR"


@dataclass(frozen=True)
class Applied:
    """What apply_defaults found: the values to fill in (option -> value,
    paths made absolute), the spec the file names (the spec rule in
    spec/locate.py decides whether it is used) and the keys it left alone."""

    config: ProjectConfig
    spec: Path | None = None
    ignored: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)


def apply_defaults(unset: Iterable[str], start: Path | None = None, *, command: str | None = None, trusted: bool = True,
                   work_tree: Path | None = None) -> Applied:
    """The values for the options a command line left unset (`unset`: their
    names) from the nearest [tool.promptspec]; `base` only for `command`
    "build" (diff takes its BASE as an argument).  The caller fills them in.

    `trusted=False` (a gate judging a pull request, which brings its own
    pyproject.toml) fills nothing and reports the keys it would have used.
    A `cache_dir` from the file never beats $PROMPTSPEC_CACHE_DIR, and is
    refused inside the git work tree `work_tree`: a committed, edited token
    cache would change the figures a reviewer sees."""
    open_keys = set(unset)
    dests = [key for key in KEYS if (key != "base" or command == "build") and key in open_keys]
    if not dests:
        return Applied(ProjectConfig())  # no option to fill: do not even look for a pyproject.toml
    config = load(start)
    wanted = [key for key in dests if config.get(key) is not None]
    if not trusted:
        return Applied(config, None, tuple(wanted))
    spec: Path | None = None
    values: dict[str, Any] = {}
    for key in wanted:
        value = config.get(key)
        if key == "spec":
            spec = Path(value)
            continue
        if key == "cache_dir":
            if os.environ.get(CACHE_ENV):
                continue
            _check_cache_outside(Path(value), work_tree, config)
        values[key] = Path(value) if key in PATH_KEYS else value
    return Applied(config, spec, values=values)


def _check_cache_outside(cache: Path, work_tree: Path | None, config: ProjectConfig) -> None:
    if work_tree is None:
        return
    real, top = cache.resolve(), work_tree.resolve()
    if real == top or top in real.parents:
        raise SpecError(
            f"[tool.promptspec] cache_dir {str(cache)!r} is inside the git work tree {top}",
            str(config.path), line=_line(config.text, "cache_dir"),
            hint=f"use a folder outside the repository, or --cache-dir / ${CACHE_ENV}",
        )
