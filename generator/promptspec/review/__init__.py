"""Reviewing a change: two sides compared (diff.py), formatted for a reviewer
(report.py), sides read from git revisions or folders (gitspec.py), and the
lock file (lockfile.py).  A release series: sides written explicitly
(sides.py), read (series.py), reduced (releases.py), compared step by step
(history.py, with reach.py saying which variants a change reaches) and
formatted (history_report.py).

May import `pipeline` and everything below it; nothing imports `review` but
`site` and `cli`.
"""

from .diff import (
    ChangeGroup,
    Diff,
    FileChange,
    Move,
    SectionChange,
    SectionState,
    VariantChange,
    VariantTotals,
    compare,
    compare_to_lock,
    crosses_headroom,
    file_changes,
    largest_increases,
    percent_change,
)
from .diff_json import to_json
from .budgets import increases_over, parse_increase
from .history.compare import History, Step, build_history
from .lockfile import INSTRUCTIONS, LockDiff
from .sides import Side, parse_side, parse_sides
from ..util.gh_markdown import fence_for, fenced, md_code, md_escape
from .report import (
    MARKDOWN_ROWS,
    MIN_MARKDOWN_CHARS,
    format_diff,
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
    "LockDiff",
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
