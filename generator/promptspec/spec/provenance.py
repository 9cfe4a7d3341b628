"""Provenance: which spec files (and which fields of them) a text was built from.

A reviewer must be told the file that really changed.  Every read a render
makes -- a template, a file pulled in through `text()` or `{% include %}`, a
mode or personality text, a `models.json` field, an AGENTS.md of the sample
tree -- is noted as a `SourceRef` into the open frames of the spec's
`ReadLog`; the assembler opens a frame per section and keeps what was noted.

Each reference carries a short digest of the exact content it stands for, so
comparing two sides names what changed by content, not by guesswork: an edit
to `modes/plan.md` changes the digest of that reference and of nothing else.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterable, Iterator


def digest(value: Any) -> str:
    """A short, stable content digest (16 hex digits of sha256)."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    else:
        data = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True, order=True)
class SourceRef:
    """One thing a text was built from: a file, or one field inside a file."""

    path: str  # as the spec shows it: "modes/plan.md", "@codex/x.md", "models.json"
    field: str = ""  # "" for a whole file; "harbor-5.context_window", "scenario.cwd", "modes.plan"
    first_line: int = 0  # 0 when unknown
    last_line: int = 0
    digest: str = ""

    @property
    def key(self) -> str:
        """The identity compared across sides: path and field, not lines (they shift)."""
        return f"{self.path}#{self.field}" if self.field else self.path

    @property
    def lines(self) -> str:
        if not self.first_line:
            return ""
        return f"{self.first_line}" if self.last_line in (0, self.first_line) else f"{self.first_line}-{self.last_line}"

    def __str__(self) -> str:
        lines = self.lines
        return self.key + (f":{lines}" if lines else "")

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.field:
            out["field"] = self.field
        if self.first_line:
            out["lines"] = [self.first_line, self.last_line or self.first_line]
        out["digest"] = self.digest
        return out


def file_ref(path: str, text: str) -> SourceRef:
    """A whole file: lines 1..n."""
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return SourceRef(path, "", 1 if text else 0, max(n, 1) if text else 0, digest(text))


def field_ref(path: str, field: str, value: Any, line: int | None = None, last: int | None = None) -> SourceRef:
    return SourceRef(path, field, line or 0, last or line or 0, digest(value))


class ReadLog:
    """Frames of notes, one per render in progress.

    A note goes to every open frame up to and including the innermost
    isolated one: a section's frame sees what its body's `text()` calls read,
    while a value computed once per variant (a mode's text) is recorded in its
    own isolated frame and handed on only where a template actually uses it.
    """

    def __init__(self) -> None:
        self._frames: list[tuple[set[SourceRef], bool]] = []
        self._watchers: list[Watch] = []

    @property
    def active(self) -> bool:
        return bool(self._frames or self._watchers)

    @property
    def watching(self) -> bool:
        return bool(self._watchers)

    def note(self, ref: SourceRef) -> None:
        for watch in self._watchers:
            watch.one.append(ref)
        self._into_frames(ref)

    def _into_frames(self, ref: SourceRef) -> None:
        for refs, isolated in reversed(self._frames):
            refs.add(ref)
            if isolated:
                break

    def note_all(self, refs: Iterable[SourceRef]) -> None:
        if not (self._frames or self._watchers):
            return
        if self._watchers:
            if not isinstance(refs, (tuple, frozenset)):
                refs = tuple(refs)
            for watch in self._watchers:
                watch.many.append(refs)
        for ref in refs:
            self._into_frames(ref)

    @contextmanager
    def frame(self, isolated: bool = False) -> Iterator[set[SourceRef]]:
        refs: set[SourceRef] = set()
        self._frames.append((refs, isolated))
        try:
            yield refs
        finally:
            self._frames.pop()

    @contextmanager
    def watch(self) -> Iterator["Watch"]:
        """Everything noted while it is open, whatever frame it lands in (or
        none): what a whole computation was built from, which the frames'
        isolation hides from any one of them (a kept conversation thread's
        dependencies, assemble/conversation.py)."""
        watch = Watch()
        self._watchers.append(watch)
        try:
            yield watch
        finally:
            self._watchers.pop()


class Watch:
    """What a ReadLog.watch saw.  The notes are kept as they come (most come
    in whole tuples and frozensets: a cached render's reads, a record's
    field) and made one set once, at the end: a thread notes the same few
    references thousands of times."""

    def __init__(self) -> None:
        self.one: list[SourceRef] = []
        self.many: list[tuple[SourceRef, ...] | frozenset[SourceRef]] = []

    def refs(self) -> set[SourceRef]:
        return set(self.one).union(*self.many)


def ordered(refs: Iterable[SourceRef]) -> tuple[SourceRef, ...]:
    """Deterministic order: by key (path, field), then lines."""
    unique: dict[tuple[Any, ...], SourceRef] = {}
    for ref in refs:
        unique.setdefault((ref.key, ref.first_line, ref.last_line, ref.digest), ref)
    return tuple(unique[k] for k in sorted(unique))


def paths_of(refs: Iterable[SourceRef]) -> tuple[str, ...]:
    return tuple(sorted({r.path for r in refs}))
