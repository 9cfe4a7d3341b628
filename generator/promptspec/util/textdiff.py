"""Line diffs with one budget, for every text diff promptspec shows.

difflib is quadratic (and worse) in the lines that differ: a 47 KB edit took
`diff` 25 s, and the same edit took `history` 8 minutes.  Texts come from pull
requests (and from a binary under verify), so every unified diff and every
similarity ratio goes through here: the common prefix and suffix are cut off
first (linear), and past a budget on what is left the diff says how much
differs instead of showing it, and a ratio is estimated from line counts
(difflib's linear `quick_ratio`).  Used by `diff`, `compare`, `history`'s
text diffs and part matching, and `verify`'s short diff.
"""

from __future__ import annotations

import difflib
from typing import Sequence

MAX_DIFF_LINES = 8_000
MAX_DIFF_CELLS = 2_000_000
"""Budget for one line diff: changed lines on both sides, and their product (difflib's work)."""


def changed_middle(a: Sequence[str], b: Sequence[str]) -> tuple[int, int, int]:
    """(common prefix length, lines of `a` in the changed middle, lines of `b` in it)."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, len(a) - start - end, len(b) - start - end


def over_budget(mid_a: int, mid_b: int) -> bool:
    return mid_a * mid_b > MAX_DIFF_CELLS or mid_a + mid_b > MAX_DIFF_LINES


def unified(a: Sequence[str], b: Sequence[str], label_a: str, label_b: str, *, n: int = 3) -> str:
    """A unified diff of two lists of lines (each ending in a newline), or,
    past the budget, one hunk line saying how many lines differ."""
    start, mid_a, mid_b = changed_middle(a, b)
    if over_budget(mid_a, mid_b):
        return (
            f"--- {label_a}\n+++ {label_b}\n"
            f"@@ -{start + 1},{mid_a} +{start + 1},{mid_b} @@ {mid_a} line(s) replaced by {mid_b}: "
            "too many changed lines to diff line by line; compare the files directly\n"
        )
    diff = difflib.unified_diff(list(a), list(b), label_a, label_b, n=n, lineterm="\n")
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff)


def similar(x: Sequence[str] | str, y: Sequence[str] | str, threshold: float) -> bool:
    """Whether difflib's ratio of `x` and `y` reaches `threshold`; past the
    budget, the linear upper bound (`quick_ratio`) on the changed middle decides."""
    sm = difflib.SequenceMatcher(None, x, y, autojunk=False)
    if sm.real_quick_ratio() < threshold or sm.quick_ratio() < threshold:
        return False
    _, mid_a, mid_b = changed_middle(x, y)
    if over_budget(mid_a, mid_b):
        return True  # quick_ratio reached it; the exact ratio would cost mid_a x mid_b
    return sm.ratio() >= threshold


__all__ = ["MAX_DIFF_CELLS", "MAX_DIFF_LINES", "changed_middle", "over_budget", "similar", "unified"]
