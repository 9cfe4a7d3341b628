"""What a side of a comparison is, written so that nobody has to guess.

`promptspec diff` used to read an argument as a folder when one of that name
existed and as a git revision otherwise, so a pull request that adds a folder
named `origin/main/` could make the gate compare against its own copy.  A
side is said explicitly; `diff` (gitspec.side_kind), the site's `base:` and
`history` all read sides with these rules:

    dir:PATH    a spec folder (it must hold spec.yaml); also ./PATH, ../PATH, /PATH, ~/PATH, PATH/
    lock:PATH   a lock file (prompts.lock.json): hashes and counts, no text
    codex:REL   a released Codex CLI (0.125.0: installed from npm into the user cache;
                or PATH to an install), imported (`history` only)
    rev:REV     a git revision of the repository holding --spec
    REV         any other bare name is a git revision -- and is refused as
                ambiguous when a file or folder of that name exists (`check_unambiguous`)

and may carry a label and a date for a release series (`history`):

    v0.150.0,label=0.150.0,date=2026-10-02
    dir:imports/0.169.0,label=0.169.0

The options are the trailing `,label=...` / `,date=...` parts; a label cannot
hold a comma.  `parse_side` is pure (no file system, no git); series.py opens
the sides.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError

KINDS = ("rev", "dir", "lock", "codex")
_OPTION = re.compile(r",(label|date)=([^,]*)$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.+Z-]*)?$")
MAX_LABEL = 80


@dataclass(frozen=True)
class Side:
    """One side as written: its kind, what it points at, and how to show it."""

    kind: str  # "rev" | "dir" | "lock" | "codex"
    ref: str  # the revision, folder or file as written
    label: str | None = None
    date: str | None = None
    explicit: bool = False  # written with its dir:/lock:/rev: prefix

    @property
    def name(self) -> str:
        """The label, else what was written (without the `dir:`/`lock:` prefix)."""
        return self.label or self.ref

    def written(self) -> str:
        """The side as the user would type it again (for messages and reports)."""
        head = f"{self.kind}:{self.ref}" if self.explicit else self.ref
        return head + (f",label={self.label}" if self.label else "") + (f",date={self.date}" if self.date else "")


def parse_side(text: str, *, label: str | None = None, date: str | None = None) -> Side:
    """Parse one side (see the module docstring); `label`/`date` given here win
    over none written (the plugin passes them as YAML keys)."""
    raw = text if isinstance(text, str) else ""
    if not raw.strip():
        raise UsageError("a side is empty; write a git revision, dir:PATH or lock:PATH")
    if any(ord(ch) < 32 for ch in raw):
        raise UsageError(f"side {raw!r} contains a control character")
    body, options = raw, {}
    while True:
        m = _OPTION.search(body)
        if m is None:
            break
        key, value = m.group(1), m.group(2).strip()
        if key in options:
            raise UsageError(f"side {raw!r} gives {key}= twice")
        options[key] = value
        body = body[: m.start()]
    kind, ref, explicit = "rev", body, False
    for prefix in KINDS:
        if body.startswith(prefix + ":"):
            kind, ref, explicit = prefix, body[len(prefix) + 1 :], True
            break
    if not explicit and _path_like(body):
        kind = "dir"
    if not ref:
        raise UsageError(f"side {raw!r} names nothing after {kind}:")
    if kind == "rev" and (ref.startswith("-") or ":" in ref):
        raise UsageError(f"{ref!r} is not a git revision; write dir:PATH for a spec folder or lock:PATH for a lock file")
    label = label if label is not None else options.get("label")
    date = date if date is not None else options.get("date")
    if label is not None:
        label = str(label).strip()
        if not label or len(label) > MAX_LABEL or any(ord(ch) < 32 for ch in label):
            raise UsageError(f"side {raw!r}: a label is 1 to {MAX_LABEL} printable characters")
    if date is not None:
        date = str(date).strip()
        if not _DATE.match(date):
            raise UsageError(f"side {raw!r}: date {date!r} is not an ISO date such as 2026-10-02")
    return Side(kind, ref, label or None, date or None, explicit)


def _path_like(text: str) -> bool:
    posix = text.replace("\\", "/")
    return posix.startswith(("./", "../", "/", "~/")) or posix.endswith("/") or posix in (".", "..") or Path(text).is_absolute()


def check_unambiguous(side: Side, root: Path) -> None:
    """A bare revision name that is also an existing path is refused: a pull
    request decides which folders exist in its checkout."""
    if side.kind == "rev" and not side.explicit and os.path.lexists(Path(root) / side.ref):
        raise UsageError(
            f"{side.ref!r} is ambiguous: it names a git revision and also an existing path; "
            f"write ./{side.ref} (or dir:{side.ref}) for the folder, or rev:{side.ref} for the revision"
        )


def parse_sides(texts: list[str]) -> list[Side]:
    """Several sides; labels must differ (they name the steps of a history)."""
    sides = [parse_side(t) for t in texts]
    seen: dict[str, str] = {}
    for s in sides:
        if s.name in seen:
            raise UsageError(f"two sides are both named {s.name!r} ({seen[s.name]} and {s.written()}); give one a label=")
        seen[s.name] = s.written()
    return sides


__all__ = ["KINDS", "Side", "check_unambiguous", "parse_side", "parse_sides"]
