"""Printing and storing a verify report (text, JSON, Markdown).

The JSON form is what `verify --out` stores and what the site reads, so a site
build never needs the Codex binary.
"""

from __future__ import annotations

import json
from typing import Any

from ..util.gh_markdown import fenced, md_code, md_escape
from .run import Report

MAX_LISTED = 50


def as_text(r: Report) -> str:
    lines = [f"Codex {r.release} vs {r.spec}: {r.identical} of {r.compared} compared variants identical"
             f" (matrix: {r.matrix_size} variants)"]
    if r.not_modelled:
        lines.append("not modelled (not compared): " + ", ".join(r.not_modelled))
    bad = [v for v in r.variants if not v.identical]
    for v in bad[:MAX_LISTED]:
        lines.append(f"DIFFERS {v.id}: {v.part}")
        if v.diff:
            lines.extend("    " + ln for ln in v.diff.splitlines())
    if len(bad) > MAX_LISTED:
        lines.append(f"... and {len(bad) - MAX_LISTED} more differing variants (see --format json)")
    if r.threads:
        same = sum(t.identical for t in r.threads)
        lines.append(f"threads: {same} of {len(r.threads)} identical in every request"
                     + ("" if r.threads_gate else " (not gating: the spec has no turns:)"))
        for t in r.threads:
            if not t.identical:
                lines.append(f"DIFFERS thread {t.thread} from {t.variant}: request {t.request} of {t.requests}: {t.part}")
                if t.diff:
                    lines.extend("    " + ln for ln in t.diff.splitlines()[:8])
    return "\n".join(lines) + "\n"


def as_markdown(r: Report) -> str:
    """For a pull-request comment or a job summary: every value from the spec or
    the binary goes through util/gh_markdown (escaped, or fenced so it cannot close its fence)."""
    release = md_escape(r.release)
    out = [f"# Conformance: Codex {release}", "",
           f"**{r.identical} of {r.compared}** compared variants are byte-identical to what Codex {release} sends"
           f" (matrix: {r.matrix_size} variants; checked {md_escape(r.date)}).", ""]
    if r.not_modelled:
        out += ["Not modelled, so not compared: " + ", ".join(md_code(p) for p in r.not_modelled) + ".", ""]
    bad = [v for v in r.variants if not v.identical]
    if bad:
        out += ["| variant | first difference |", "|---|---|"]
        out += [f"| {md_code(v.id)} | {md_escape(v.part)} |" for v in bad[:MAX_LISTED]]
        for v in bad[:10]:
            out += ["", f"## {md_code(v.id)}", "", fenced(v.diff or "").rstrip("\n")]
    if r.threads:
        same = sum(t.identical for t in r.threads)
        out += ["", "## Threads", "", f"**{same} of {len(r.threads)}** standard threads are identical in every request"
                + ("." if r.threads_gate else " (not gating: the spec has no `turns:`)."), "",
                "| thread | from | requests | first difference |", "|---|---|---|---|"]
        out += [f"| {md_escape(t.thread)} | {md_code(t.variant)} | {t.requests} | "
                + ("identical" if t.identical else f"request {t.request}: {md_escape(t.part or '')}") + " |" for t in r.threads]
    return "\n".join(out) + "\n"


def as_json(r: Report) -> str:
    return json.dumps(r.to_json(), indent=2, ensure_ascii=False) + "\n"


def render(r: Report, fmt: str) -> str:
    return {"text": as_text, "json": as_json, "markdown": as_markdown}[fmt](r)


def load(data: Any) -> dict[str, Any]:
    """A stored report, checked enough for the site to trust its shape."""
    if not isinstance(data, dict) or data.get("kind") != "promptspec-verify-report":
        raise ValueError("not a promptspec verify report")
    return data
