"""Comparing promptspec's first request with the one Codex sent, part by part.

Both sides are cut the same way (`importers.codex_cli.parts`), after removing
only the documented volatile fields (message ids, `prompt_cache_key`,
`client_metadata`, metadata timestamps) and the turn's own prompt.  Whatever the
spec format cannot express yet is listed as "not modelled", never silently
counted as equal.
"""

from __future__ import annotations

from ..util import textdiff
from dataclasses import dataclass, field
from typing import Any, Mapping

from . import parts

DIFF_LINES = 12
NOT_MODELLED_KINDS = ("additional_tools",)


@dataclass
class Difference:
    part: str  # e.g. "input[1] developer part 2 (permissions)"
    diff: str  # a short unified diff, or a one-line description


@dataclass
class Outcome:
    identical: bool
    first: Difference | None = None
    not_modelled: list[str] = field(default_factory=list)


def short_diff(expected: str, got: str, limit: int = DIFF_LINES) -> str:
    lines = textdiff.unified(expected.splitlines(keepends=True), got.splitlines(keepends=True), "codex", "promptspec",
                             n=1).splitlines(keepends=True)  # budgeted: the binary's text is input too
    if not lines:  # differ only in a final newline or other invisible way
        for i, (a, b) in enumerate(zip(expected, got)):
            if a != b:
                return f"first different character at {i}: codex {expected[i:i + 40]!r} vs promptspec {got[i:i + 40]!r}"
        return f"codex has {len(expected)} characters, promptspec {len(got)}"
    shown = [ln if ln.endswith("\n") else ln + "\n" for ln in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"... ({len(lines) - limit} more diff lines)\n")
    return "".join(shown).rstrip("\n")


def compare(codex_body: Mapping[str, Any], ours: Mapping[str, Any], prompt: str | None, compare_tools: bool = False) -> Outcome:
    """`ours` is promptspec's Responses-API body for the same configuration."""
    c = parts.parse(codex_body, prompt)
    o = parts.parse(ours, None)
    out = Outcome(True)
    skipped = [i for i in c.items if i.kind in NOT_MODELLED_KINDS and not any(j.kind == i.kind for j in o.items)]
    for i in skipped:
        out.not_modelled.append(f"input item {i.kind}")
    c_items = [i for i in c.items if i not in skipped]
    if not compare_tools:
        if c.tools:
            out.not_modelled.append("tools")
        out.not_modelled.append("request parameters")

    def differ(part: str, diff: str) -> Outcome:
        out.identical = False
        out.first = Difference(part, diff)
        return out

    if prompt is not None and c.prompt is None:  # None: a later request, compared whole
        return differ("input (last item)", "Codex's request does not end with the turn's prompt")
    if (c.instructions is None) != (o.instructions is None):
        where = "the instructions field" if c.instructions is not None else "a developer message"
        return differ("instructions", f"Codex sends the base instructions in {where}; promptspec does not")
    if c.instructions is not None and c.instructions != o.instructions:
        return differ("instructions", short_diff(c.instructions, o.instructions or ""))
    for n, (ci, oi) in enumerate(zip(c_items, o.items)):
        label = f"input[{n}] {ci.role}"
        if (ci.kind, ci.role) != (oi.kind, oi.role):
            return differ(label, f"Codex sends a {ci.role} {ci.kind}, promptspec a {oi.role} {oi.kind}")
        for k, ((cn, ct), (on, ot)) in enumerate(zip(ci.parts, oi.parts), 1):
            if ct != ot:
                return differ(f"{label} part {k} ({cn})", short_diff(ct, ot))
        if len(ci.parts) != len(oi.parts):
            extra = ci.parts[len(oi.parts):] or oi.parts[len(ci.parts):]
            who = "Codex" if len(ci.parts) > len(oi.parts) else "promptspec"
            return differ(f"{label} part {min(len(ci.parts), len(oi.parts)) + 1} ({extra[0][0]})",
                          f"only {who} sends this part: {extra[0][1][:80]!r}")
        if ci.fields != oi.fields:
            return differ(f"{label} keys", f"codex {ci.fields or '{}'} vs promptspec {oi.fields or '{}'}")
        if ci.metadata != oi.metadata and ci.metadata:
            if "item metadata" not in out.not_modelled:
                out.not_modelled.append("item metadata")
    if len(c_items) != len(o.items):
        longer = c_items if len(c_items) > len(o.items) else o.items
        who = "Codex" if longer is c_items else "promptspec"
        extra = longer[min(len(c_items), len(o.items))]
        return differ(f"input[{min(len(c_items), len(o.items))}] {extra.role}",
                      f"only {who} sends this item ({', '.join(n for n, _ in extra.parts)})")
    if compare_tools:
        if c.tools != o.tools:
            return differ("tools", short_diff(c.tools, o.tools))
        if c.params != o.params:
            return differ("request parameters", short_diff(c.params.replace(",\"", ",\n\""), o.params.replace(",\"", ",\n\"")))
        if c.keys != o.keys:
            return differ("body key order", f"codex {', '.join(c.keys)} vs promptspec {', '.join(o.keys)}")
    return out
