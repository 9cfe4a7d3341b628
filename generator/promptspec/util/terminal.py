"""Printing untrusted text: the CLI's stdout and warnings, escaped.

Names, lock-file strings and prompt text come from pull requests and end up
in terminals and CI logs, where an ESC sequence can hide a line from a
reviewer and a line starting with `::` is a GitHub Actions workflow command.
"""

from __future__ import annotations

import sys

from ..errors import escape_controls


class EscapedStream:
    """A text stream that escapes control characters and line-start `::`
    (errors.escape_controls) in everything written through it."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text, newlines=True))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """For warnings.showwarning: one `promptspec: warning:` line, not Python's two."""
    print(f"promptspec: warning: {escape_controls(' '.join(str(message).split()))}", file=sys.stderr)
