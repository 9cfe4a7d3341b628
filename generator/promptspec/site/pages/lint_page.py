"""Lint findings on the site: a section on each fragment's page and the Lint
overview page.

The findings come from `lint.lint(result)`, run once per build (`run` times
it into `result.timings["lint"]`, next to load/assemble/count, so a slow rule
shows up in `-v` output and the bench scripts).  Each finding shows its rule
ID — linked to the rule's section of the rules reference when the site has
that page — its severity, its place and its message, all escaped.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from ..index import SiteIndex
from ..html.markup import Cell, block, front_matter, h, ident, link, md_inline, table


def run(result: Any) -> list:
    """`lint.lint(result)`, timed into `result.timings["lint"]`."""
    from ...authoring.lint import lint

    t = time.perf_counter()
    findings = lint(result)
    if isinstance(getattr(result, "timings", None), dict):
        result.timings["lint"] = time.perf_counter() - t
    return findings


def rule_link(idx: SiteIndex, page: str, rule: str) -> str:
    """The rule ID, linked to `guide/lint-rules.md#psNNN` when the site has it."""
    from ...authoring.findings import RULES

    info = RULES.get(rule)
    title = f"{info.name}: {info.summary}" if info else None
    label = f"<code>{h(rule)}</code>"
    if idx.rules_page is None:
        return f'<span title="{h(title)}">{label}</span>' if title else label
    return link(idx.href(page, idx.rules_page, rule.lower()), label, title=title)


def severity(sev: str) -> str:
    return f'<span class="ps-sev ps-sev-{h(sev)}">{h(sev)}</span>'


def counts_text(findings: Sequence[Any]) -> str:
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = len(findings) - errors
    return f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"


def _variant_link(idx: SiteIndex, page: str, variant_id: str | None) -> str:
    if not variant_id:
        return "–"
    v = idx.by_id.get(variant_id)
    if v is None:
        return f"<code>{ident(variant_id)}</code>"
    return link(idx.variant_href(page, v), h(variant_id))


def _table(idx: SiteIndex, page: str, findings: Sequence[Any], *, fragment_column: bool) -> str:
    fragments = {f.name for f in idx.spec.fragments}
    rows = []
    for f in findings:
        row: list[str | Cell] = [
            f"<code>{ident(f.location)}</code>",
            rule_link(idx, page, f.rule),
            severity(f.severity),
            Cell(h(f.message), "ps-text"),
        ]
        if fragment_column:
            if f.fragment and f.fragment in fragments:
                row.append(link(idx.href(page, idx.fragment_page(f.fragment)), f"<code>{ident(f.fragment)}</code>"))
            else:
                row.append(h(f.fragment) if f.fragment else "–")
        row.append(_variant_link(idx, page, f.variant))
        rows.append(row)
    headers = ["where", "rule", "severity", "message", *(["fragment"] if fragment_column else []), "variant"]
    return table(headers, rows, cls="ps-lint")


def fragment_section(idx: SiteIndex, name: str) -> list[str]:
    """The "Lint" part of a fragment's page."""
    from ...authoring.findings import for_fragment

    page = idx.fragment_page(name)
    mine = for_fragment(idx.findings, name)
    out = [f"## Lint ({len(mine)})", ""]
    overview = link(idx.href(page, idx.lint_page), "all findings")
    if not mine:
        out += [block(f"<p>No lint findings for this fragment ({overview}).</p>", cls="ps-intro ps-lint-clean"), ""]
        return out
    out += [block(f"<p>{counts_text(mine)} for this fragment ({overview}).</p>", cls="ps-intro"), ""]
    out += [_table(idx, page, mine, fragment_column=False), ""]
    return out


def lint_page(idx: SiteIndex) -> str:
    """Every finding of `promptspec lint`, or that there are none."""
    page = idx.lint_page
    findings = idx.findings
    out = [front_matter({"title": "Lint"}).rstrip("\n"), "", f"# {md_inline('Lint findings')}", ""]
    rules = (
        f" Each rule is explained in the {link(idx.href(page, idx.rules_page), 'lint rules reference')}."
        if idx.rules_page else ""
    )
    if not findings:
        out += [block(f"<p><strong>No findings</strong>: the spec passes every lint rule (<code>promptspec lint --strict</code>).{rules}</p>",
                      cls="ps-intro ps-lint-clean"), ""]
        return "\n".join(out).rstrip("\n") + "\n"
    out += [block(
        f"<p><code>promptspec lint</code> reports {counts_text(findings)} for this spec, in file order.{rules}</p>",
        cls="ps-intro",
    ), ""]
    out += [_table(idx, page, findings, fragment_column=True), ""]
    return "\n".join(out).rstrip("\n") + "\n"
