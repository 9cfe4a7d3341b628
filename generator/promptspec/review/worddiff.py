"""Word-level changes inside a changed line.

Prompt texts have long lines: a unified diff shows a 300-character line
removed and added again, and the reviewer hunts for the one word that
differs.  `line_pairs` finds the removed/added lines of a unified diff that
belong together; `word_ops` splits such a pair into kept, removed and added
runs, which the Markdown report and the site mark up (escaped) as <del>/<ins>.
"""

from __future__ import annotations

import difflib
import re
from typing import Callable, Iterator

LONG_LINE = 80
"""Lines at least this long get a word-level view in the Markdown report."""

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")

MAX_WORD_CELLS = 250_000
"""SequenceMatcher is quadratic: past this product of word counts, a pair is shown as a whole-line change."""


def word_ops(old: str, new: str) -> list[tuple[str, str]]:
    """[(op, text)] with op in "=", "-", "+": `old` is the "=" and "-" runs, `new` the "=" and "+" runs."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) * len(b) > MAX_WORD_CELLS:
        return [("-", old), ("+", new)]
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


MAX_PAIRS = 200
"""Most line pairs marked per diff (the rest are shown as plain lines)."""


def line_pairs(diff: str) -> Iterator[tuple[str, str]]:
    """(removed line, added line) pairs of a unified diff: a run of `-` lines
    followed by a run of `+` lines, paired in order."""
    minus: list[str] = []
    plus: list[str] = []

    def flush() -> Iterator[tuple[str, str]]:
        yield from zip(minus, plus)
        minus.clear()
        plus.clear()

    for line in diff.splitlines():
        if line.startswith(("---", "+++")) and not minus and not plus:
            continue
        if line.startswith("-"):
            if plus:
                yield from flush()
            minus.append(line[1:])
        elif line.startswith("+"):
            plus.append(line[1:])
        else:
            yield from flush()
    yield from flush()


def _escaped(text: str, escape: Callable[[str], str]) -> str:
    """`escape(text)` with a space kept at either edge: an escape that folds
    whitespace (md_escape) dropped them, so an insertion read `verified.<ins>For`."""
    core = text.strip()
    if not core:
        return " " if text else ""
    return (" " if text[0].isspace() else "") + escape(core) + (" " if text[-1].isspace() else "")


def markup(ops: list[tuple[str, str]], escape: Callable[[str], str], *, context: int = 40) -> str:
    """The changed runs as <del>/<ins>, kept runs escaped and shortened to `context` characters each side."""
    parts = []
    for i, (op, text) in enumerate(ops):
        if op == "=":
            if i > 0 and i < len(ops) - 1 and len(text) > 2 * context:
                text = text[:context] + " … " + text[-context:]
            elif i == 0 and len(text) > context:
                text = "…" + text[-context:]
            elif i == len(ops) - 1 and len(text) > context:
                text = text[:context] + "…"
            parts.append(_escaped(text, escape))
        elif op == "-":
            parts.append(f"<del>{_escaped(text, escape)}</del>")
        else:
            parts.append(f"<ins>{_escaped(text, escape)}</ins>")
    return "".join(parts)


def long_line_changes(diff: str, escape: Callable[[str], str], *, min_len: int = LONG_LINE, limit: int = 20) -> list[str]:
    """Word-level markup for the changed pairs where either line is long."""
    out = []
    for old, new in line_pairs(diff):
        if max(len(old), len(new)) >= min_len:
            out.append(markup(word_ops(old, new), escape))
            if len(out) >= limit:
                break
    return out
