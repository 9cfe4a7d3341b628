"""The one error type users see.

Every user mistake becomes a `SpecError`, and the CLI prints it as a single
line `path:line:col: what is wrong (how to fix it)` with exit status 2.  Keeping
location and hint as fields (rather than baking them into the message early)
lets the MkDocs plugin, the lint report and the CLI all format it the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# C0 and C1 controls, DEL, line/paragraph separators, bidi overrides (which
# reorder what a reader sees) and lone surrogates (which cannot be encoded).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_IN_TEXT = re.compile(f"[{_CONTROLS}]")
_IN_LINE = re.compile(f"[{_CONTROLS}\n]")
_COMMAND = re.compile(r"^([ \t]*)::", re.M)


def escape_controls(text: str, *, newlines: bool = False, commands: bool = False) -> str:
    """Make untrusted text safe to print to a terminal or a CI log.

    File names, lock-file keys and prompt text come from pull requests: an
    ESC sequence could hide lines of a diff from a reviewer, a newline could
    forge a second error line, and a line starting with `::` is a GitHub
    Actions workflow command (`::add-mask::`, `::error::`).  Controls become
    visible `\\u001b` escapes (valid inside JSON strings too); with
    `newlines`, LF is kept and a `::` at the start of a line is escaped --
    unless `commands` says the text *is* workflow commands (`--format github`,
    whose writer escapes every value it puts inside one)."""
    if newlines:
        out = _IN_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        return out if commands else _COMMAND.sub(lambda m: f"{m.group(1)}\\::", out)
    return _IN_LINE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class PromptspecError(Exception):
    """Base class: anything promptspec raises on purpose for a user to read."""

    exit_code = 2

    def oneline(self) -> str:
        return escape_controls(" ".join(str(self).split("\n")))


@dataclass(eq=False)
class SpecError(PromptspecError):
    message: str
    path: str | Path | None = None
    line: int | None = None
    column: int | None = None
    hint: str | None = None

    def __post_init__(self) -> None:
        super().__init__(self.oneline())

    def location(self) -> str:
        if self.path is None:
            return ""
        loc = str(self.path)
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        return loc

    def oneline(self) -> str:
        text = " ".join(self.message.split())
        if self.hint:
            text += f" ({' '.join(self.hint.split())})"
        loc = self.location()
        return escape_controls(f"{loc}: {text}" if loc else text)

    def __str__(self) -> str:
        return self.oneline()


class UsageError(PromptspecError):
    """A bad command-line request (unknown model name, missing argument...)."""
