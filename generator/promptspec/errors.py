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

INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
"""Characters a reader cannot see but a model reads (a regex class body):
every format character (Unicode category Cf: zero-width spaces and joiners,
bidi marks, overrides and isolates, the soft hyphen, the BOM, tag characters
U+E0000-E007F that spell out hidden ASCII), variation selectors and the
Hangul fillers.  Review outputs show each as a `\\u200b` escape
(`reveal_invisible`), and lint reports them in spec files: a pull request
must not add an instruction that the diff, the comment and the site show as
nothing."""

# C0 and C1 controls, DEL, line/paragraph separators, lone surrogates (which
# cannot be encoded) and everything INVISIBLE (bidi overrides included).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff" + INVISIBLE
_IN_TEXT = re.compile(f"[{_CONTROLS}]")
_IN_LINE = re.compile(f"[{_CONTROLS}\n]")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_COMMAND = re.compile(r"^([ \t]*)::", re.M)


def _escape_char(m: re.Match[str]) -> str:
    """`\\u200b`; a character past U+FFFF as its UTF-16 pair (`\\udb40\\udc49`),
    so the escape reads back as the same character inside a JSON string too."""
    n = ord(m.group())
    if n <= 0xFFFF:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def reveal_invisible(text: str) -> str:
    """Every INVISIBLE character of `text` as a visible escape, nothing else changed."""
    return _INVISIBLE.sub(_escape_char, text)


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
        out = _IN_TEXT.sub(_escape_char, text)
        return out if commands else _COMMAND.sub(lambda m: f"{m.group(1)}\\::", out)
    return _IN_LINE.sub(_escape_char, text)


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
