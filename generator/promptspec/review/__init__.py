"""Reviewing a change: the one model of what changed (change.py), made by
comparing two sides -- two pipeline Results (diff.py) or a lock and a Result
(lockfile.py, which also reads and writes the lock file) -- and formatted for
a reviewer (report.py for `diff`, check_output.py for `check`); sides read
from git revisions or folders (gitspec.py).  A release series (history/):
sides written explicitly (sides.py), read (series.py), reduced
(releases.py), compared step by step into the same Diff (compare.py, with
reach.py saying which variants a change reaches) and formatted (report.py).

May import `pipeline` and everything below it; nothing imports `review` but
`site` and `cli`.
"""

from .change import (
    INSTRUCTIONS,
    AxisChange,
    ChangeGroup,
    Diff,
    FileChange,
    Move,
    SectionChange,
    SectionState,
    VariantChange,
    VariantTotals,
    crosses_headroom,
    largest_increases,
    percent_change,
)
from .diff import compare, file_changes
from .budgets import increases_over, parse_increase
from .history.compare import History, Step, build_history
from .lockfile import compare as compare_to_lock
from .sides import Side, parse_side, parse_sides
from ..util.gh_markdown import fence_for, fenced, md_code, md_escape
from .report import (
    MARKDOWN_ROWS,
    MIN_MARKDOWN_CHARS,
    format_diff,
    to_json,
    to_markdown,
    to_text,
)

__all__ = [
    "History",
    "Side",
    "Step",
    "build_history",
    "parse_side",
    "parse_sides",
    "INSTRUCTIONS",
    "AxisChange",
    "ChangeGroup",
    "Diff",
    "FileChange",
    "MARKDOWN_ROWS",
    "MIN_MARKDOWN_CHARS",
    "Move",
    "SectionChange",
    "SectionState",
    "VariantChange",
    "VariantTotals",
    "compare",
    "compare_to_lock",
    "crosses_headroom",
    "fence_for",
    "fenced",
    "file_changes",
    "format_diff",
    "increases_over",
    "largest_increases",
    "md_code",
    "md_escape",
    "parse_increase",
    "percent_change",
    "to_json",
    "to_markdown",
    "to_text",
]
