"""Lint: the mistakes a spec can make that loading alone does not catch.

The loader refuses what cannot be assembled at all; lint reports what assembles
but is wrong or wasteful: a section in the wrong message, markers Codex could
confuse, text glued onto its markers, template names nobody defines, token
overruns, files nothing uses.  Every rule has a stable ID (``PS101``...) so a
finding can be looked up in ``docs/guide/lint-rules.md#ps101``, silenced in a
review, or shown on a fragment's page of the site.

`check_spec` needs only the loaded `Spec`; `check_result` needs the assembled
and measured `Result`.  `lint(result)` runs both and returns findings sorted by
place, so output is deterministic.  The rules live in lint_rules.py.
"""

from __future__ import annotations

from typing import Any

from ..spec.model import Spec
from .findings import (
    ERROR,
    RULES,
    WARNING,
    Finding,
    RuleInfo,
    counts,
    for_fragment,
    format_text,
    sorted_findings,
    to_json,
)
from .lint_rules import (
    RESULT_RULES,
    SPEC_RULES,
    static_marker,
    template_uses,
    used_files,
)

__all__ = [
    "ERROR",
    "RULES",
    "WARNING",
    "Finding",
    "RuleInfo",
    "check_result",
    "check_spec",
    "counts",
    "for_fragment",
    "format_text",
    "lint",
    "static_marker",
    "template_uses",
    "to_json",
    "used_files",
]

# ---------------------------------------------------------------------------
# Entry points


def lint(result: Any) -> list[Finding]:
    """Every rule over an assembled and measured `pipeline.Result`, sorted.

    The result must come from a full run of the spec (all variants), since the
    orphan rule relies on the files that run read."""
    return sorted_findings(set(check_spec(result.spec)) | set(check_result(result)))


def check_spec(spec: Spec) -> list[Finding]:
    """The rules that need only the loaded spec (no rendering).  Safe to call
    when assembly fails: these findings usually explain why."""
    return sorted_findings(f for rule in SPEC_RULES for f in rule(spec))


def check_result(result: Any) -> list[Finding]:
    """The rules that need rendered sections, token counts or the files read."""
    return sorted_findings(f for rule in RESULT_RULES for f in rule(result))


