"""The one error type users see.

Every user mistake becomes a `SpecError`, and the CLI prints it as a single
line `path:line:col: what is wrong (how to fix it)` with exit status 2.  Keeping
location and hint as fields (rather than baking them into the message early)
lets the MkDocs plugin, the lint report and the CLI all format it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class PromptspecError(Exception):
    """Base class: anything promptspec raises on purpose for a user to read."""

    exit_code = 2

    def oneline(self) -> str:
        return " ".join(str(self).split("\n"))


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
        return f"{loc}: {text}" if loc else text

    def __str__(self) -> str:
        return self.oneline()


class UsageError(PromptspecError):
    """A bad command-line request (unknown model name, missing argument...)."""
