"""Printing untrusted text: the CLI's stdout and warnings, escaped.

Names, lock-file strings and prompt text come from pull requests and end up
in terminals and CI logs, where an ESC sequence can hide a line from a
reviewer and a line starting with `::` is a GitHub Actions workflow command.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Iterator

from ..errors import escape_controls


class EscapedStream:
    """A text stream that escapes control characters and line-start `::`
    (errors.escape_controls) in everything written through it."""

    def __init__(self, stream, *, commands: bool = False):
        self._stream = stream
        self._commands = commands

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text, newlines=True, commands=self._commands))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """For warnings.showwarning: one `promptspec: warning:` line, not Python's two."""
    print(f"promptspec: warning: {escape_controls(' '.join(str(message).split()))}", file=sys.stderr)


def input_error(exc: BaseException) -> str | None:
    """The one-line message for an exception that means bad input or a
    refusing system (a full disk, a busy folder, a file nested too deeply),
    which the user can fix: exit 2 like every other bad input, not a crash."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return escape_controls(where + (exc.strerror or str(exc)))
    if isinstance(exc, (MemoryError, RecursionError, UnicodeError)):
        what = {MemoryError: "the input needs more memory than is available", RecursionError: "the input nests too deeply"}.get(
            type(exc), f"text that cannot be encoded ({exc})"
        )
        return escape_controls(what) + " (check the spec for huge or malformed files)"
    return None


@contextlib.contextmanager
def escaped_output(stdout: bool = True, *, commands: bool = False) -> Iterator[None]:
    """For one CLI command: stdout escaped (unless it is a payload), warnings as
    one line.  `commands`: stdout is workflow commands on purpose (`--format
    github`), so a line-start `::` stays; control characters are still escaped."""
    real, shown = sys.stdout, warnings.showwarning
    if stdout:
        sys.stdout = EscapedStream(real, commands=commands)  # type: ignore[assignment]
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        sys.stdout, warnings.showwarning = real, shown
