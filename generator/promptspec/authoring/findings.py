"""Lint findings: the rule table (stable IDs, severities, doc anchors), the
`Finding` record, and its text and JSON forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

ERROR = "error"
WARNING = "warning"

DOC_PAGE = "docs/guide/lint-rules.md"

IGNORED_FILES = ("prompts.lock.json", "provenance.json")
"""Files in a spec folder that are not spec input (the lock is our own output;
provenance.json records where an imported spec's texts came from)."""


@dataclass(frozen=True)
class RuleInfo:
    id: str
    name: str
    severity: str
    summary: str

    @property
    def anchor(self) -> str:
        return self.id.lower()


RULES: Mapping[str, RuleInfo] = {
    r.id: r
    for r in (
        RuleInfo("PS101", "role-matches-slot", ERROR, "a fragment's role is developer or user and matches its slot's message"),
        RuleInfo("PS102", "marker-pair", ERROR, "start and end markers are both set or both empty"),
        RuleInfo("PS103", "marker-collision", ERROR, "markers are unique and no marker is a prefix of another (case-insensitive)"),
        RuleInfo("PS104", "marker-glue", WARNING, "the rendered body does not glue onto its markers"),
        RuleInfo("PS105", "marker-non-ascii", WARNING, "markers are plain ASCII, so no look-alike character hides in them"),
        RuleInfo("PS106", "invisible-characters", ERROR, "spec files hold no invisible characters (zero-width, bidi controls, tag characters)"),
        RuleInfo("PS201", "undefined-variable", ERROR, "every template variable (and `requires` name) is defined"),
        RuleInfo("PS202", "unused-variable", WARNING, "every variable a fragment declares is used by its templates"),
        RuleInfo("PS203", "unknown-name", ERROR, "`when` and matrix rule patterns match a defined axis or field value"),
        RuleInfo("PS204", "fragment-never-applies", WARNING, "a fragment's `when` leaves at least one variant"),
        RuleInfo("PS205", "fragment-never-rendered", WARNING, "a fragment produces a section in at least one variant"),
        RuleInfo("PS301", "agents-md-truncated", WARNING, "AGENTS.md text fits in project_doc_max_bytes"),
        RuleInfo("PS302", "fragment-over-budget", WARNING, "no section exceeds tokens.fragment_budget"),
        RuleInfo("PS303", "variant-over-compaction", ERROR, "no variant starts past its auto-compaction limit"),
        RuleInfo("PS401", "orphan-file", WARNING, "every file in the spec folder is used by some variant"),
        RuleInfo("PS501", "tool-without-description", WARNING, "every function, free-form and namespace tool (and namespace member) has a description"),
        RuleInfo("PS502", "parameter-without-description", WARNING, "every parameter of a function tool has a description"),
        RuleInfo("PS503", "tool-never-sent", WARNING, "a tool's `when` leaves at least one variant"),
    )
}


@dataclass(frozen=True)
class Finding:
    """One problem at one place (see `sort_key` for the output order)."""

    path: str
    line: int
    rule: str
    message: str
    severity: str = ERROR
    fragment: str | None = None
    variant: str | None = None

    @property
    def anchor(self) -> str:
        return self.rule.lower()

    @property
    def doc(self) -> str:
        """Where the rule is explained: `docs/guide/lint-rules.md#ps101`."""
        return f"{DOC_PAGE}#{self.anchor}"

    @property
    def site_doc(self) -> str:
        """The same link relative to the docs folder, for pages of the site."""
        return f"{DOC_PAGE.removeprefix('docs/')}#{self.anchor}"

    def sort_key(self) -> tuple[str, int, str, str, str, str]:
        """By place, then rule: findings about one file read top to bottom."""
        return (self.path, self.line, self.rule, self.message, self.fragment or "", self.variant or "")

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def oneline(self) -> str:
        """`path:line: PS101 message` — the form editors and CI annotate."""
        return f"{self.location}: {self.rule} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line or None,
            "rule": self.rule,
            "name": RULES[self.rule].name,
            "severity": self.severity,
            "message": self.message,
            "fragment": self.fragment,
            "variant": self.variant,
            "doc": self.doc,
        }


def finding(rule: str, path: str, line: int | None, message: str, *, fragment: str | None = None, variant: str | None = None) -> Finding:
    return Finding(path, line or 0, rule, message, RULES[rule].severity, fragment, variant)


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(set(findings), key=Finding.sort_key)


def for_fragment(findings: Iterable[Finding], name: str) -> list[Finding]:
    """The findings a fragment's page should show."""
    return [f for f in findings if f.fragment == name]


def counts(findings: Iterable[Finding], *, strict: bool = False) -> tuple[int, int]:
    """(errors, warnings); with `strict`, warnings count as errors."""
    errors = warnings = 0
    for f in findings:
        if f.severity == ERROR or strict:
            errors += 1
        else:
            warnings += 1
    return errors, warnings


# ---------------------------------------------------------------------------
# Output


def format_text(findings: Sequence[Finding], *, strict: bool = False) -> str:
    lines = [f"{f.oneline()} ({f.severity}; {f.doc})" for f in findings]
    errors, warnings = counts(findings, strict=strict)
    if findings:
        lines.append(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
                     + (" (--strict: warnings count as errors)" if strict and any(f.severity == WARNING for f in findings) else ""))
    else:
        lines.append("no findings")
    return "\n".join(lines) + "\n"


def to_json(findings: Sequence[Finding], *, strict: bool = False) -> dict[str, Any]:
    errors, warnings = counts(findings, strict=strict)
    return {
        "findings": [f.to_dict() for f in findings],
        "errors": errors,
        "warnings": warnings,
        "strict": strict,
    }


def to_annotations(findings: Sequence[Finding], *, prefix: str = "", strict: bool = False) -> list[Any]:
    """Findings as `util.annotations.Annotation`s (`prefix`: the spec folder inside the repository)."""
    from ..util.annotations import Annotation, join_path

    out = []
    for f in findings:
        level = "error" if f.severity == ERROR or strict else "warning"
        where = f" ({f.fragment})" if f.fragment else ""
        out.append(Annotation(join_path(prefix, f.path), f.line, level, f.rule, f"{f.rule} {RULES[f.rule].name}{where}",
                              f"{f.message} (see {f.doc})"))
    return out


def rule_docs() -> list[Any]:
    from ..util.annotations import RuleDoc

    return [RuleDoc(r.id, r.name, r.summary, r.severity, None) for r in RULES.values()]


def format_machine(findings: Sequence[Finding], fmt: str, *, prefix: str = "", strict: bool = False, version: str = "") -> str:
    """`--format github` (workflow commands) or `--format sarif` (SARIF 2.1.0)."""
    from ..util import annotations

    notes = to_annotations(findings, prefix=prefix, strict=strict)
    if fmt == "github":
        return annotations.github(notes)
    return annotations.sarif(notes, rule_docs(), version=version)


def render_findings(findings: Sequence[Finding], fmt: str, *, strict: bool = False, prefix: str = "", version: str = "") -> str:
    """`lint --format text|json|github|sarif`."""
    import json

    if fmt == "json":
        return json.dumps(to_json(findings, strict=strict), indent=2, ensure_ascii=False) + "\n"
    if fmt in ("github", "sarif"):
        return format_machine(findings, fmt, prefix=prefix, strict=strict, version=version)
    return format_text(findings, strict=strict)
