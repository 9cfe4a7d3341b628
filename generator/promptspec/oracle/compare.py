"""Comparing promptspec's first request with the one Codex sent, part by part.

Both sides are cut the same way (`oracle.parts`), after removing only the
documented volatile fields (message ids, `prompt_cache_key`, `client_metadata`,
metadata timestamps) and the turn's own prompt.  Whatever the spec format
cannot express yet is listed as "not modelled", never silently counted as equal.

Every differing part is listed, not only the first: a report that shows one
difference per variant hides the others until the first is fixed.  Each has a
stable `name` ("permissions", "tool update_plan", "request parameters") so a
report can group the variants that differ the same way, and tools are compared
one by one, pretty-printed, so a changed word in a description is a short diff
that names its tool rather than one line of the whole tool list.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..util import textdiff

from . import parts

DIFF_LINES = 12
LONG_LINE = 160
"""A changed line longer than this is shown around its change only."""
CONTEXT = 60
NOT_MODELLED_KINDS = ("additional_tools",)


@dataclass
class Difference:
    part: str  # where: e.g. "input[1] developer part 2 (permissions)"
    diff: str  # a short unified diff, or a one-line description
    name: str = ""  # what, the same in every variant: "permissions", "tool update_plan"

    def __post_init__(self) -> None:
        if not self.name:
            self.name = part_name_of(self.part)


@dataclass
class Outcome:
    identical: bool
    differences: list[Difference] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)

    @property
    def first(self) -> Difference | None:
        return self.differences[0] if self.differences else None


_KEY = re.compile(r'\s*"[^"]{1,40}": ')
_NAMED = re.compile(r"\(([^()]+)\)$")


def part_name_of(label: str) -> str:
    """The stable name in a location label: "input[0] developer part 1 (permissions)" -> "permissions"."""
    m = _NAMED.search(label)
    return m.group(1) if m else label


def _elide(line: str, other: str) -> str:
    """A long changed line shown around where it differs from its counterpart."""
    if len(line) <= LONG_LINE:
        return line
    lead, body = line[0], line[1:]
    start, changed, _ = textdiff.changed_middle(body, other[1:])  # a string is a sequence of characters
    lo, hi = max(0, start - CONTEXT), min(len(body), start + changed + CONTEXT)
    key = _KEY.match(body)  # a JSON line keeps its key: `"description": …`
    head = key.group(0) if key and key.end() < lo else ""
    return lead + head + ("…" if lo > len(head) else "") + body[lo:hi] + ("…" if hi < len(body) else "")


def _trim_long_lines(lines: list[str]) -> list[str]:
    """Pair each run of removed lines with the added lines after it and elide long ones."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("-") and not lines[i].startswith("---"):
            j = i
            while j < len(lines) and lines[j].startswith("-"):
                j += 1
            k = j
            while k < len(lines) and lines[k].startswith("+") and not lines[k].startswith("+++"):
                k += 1
            minus, plus = lines[i:j], lines[j:k]
            for n, ln in enumerate(minus):
                out.append(_elide(ln, plus[n] if n < len(plus) else ""))
            for n, ln in enumerate(plus):
                out.append(_elide(ln, minus[n] if n < len(minus) else ""))
            i = k
        else:
            out.append(lines[i])
            i += 1
    return out


def short_diff(expected: str, got: str, limit: int = DIFF_LINES) -> str:
    lines = textdiff.unified(expected.splitlines(keepends=True), got.splitlines(keepends=True), "codex", "promptspec",
                             n=1).splitlines()  # budgeted: the binary's text is input too
    if not lines:  # differ only in a final newline or other invisible way
        for i, (a, b) in enumerate(zip(expected, got)):
            if a != b:
                return f"first different character at {i}: codex {expected[i:i + 40]!r} vs promptspec {got[i:i + 40]!r}"
        return f"codex has {len(expected)} characters, promptspec {len(got)}"
    lines = _trim_long_lines(lines)
    shown = lines[:limit]
    if len(lines) > limit:
        shown.append(f"... ({len(lines) - limit} more diff lines)")
    return "\n".join(shown)


def pretty(value: Any) -> str:
    """JSON as a person reads it in a diff: one key a line, keys in send order."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def tool_key(tool: Any) -> str:
    """A tool's name in a report: its `name`, else its `type` (web_search)."""
    if isinstance(tool, dict):
        return str(tool.get("name") or tool.get("type") or "?")
    return "?"


def _keyed(tools: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in tools:
        key = tool_key(t)
        n = 2
        while key in out:  # the same name twice: keep both, apart
            key = f"{tool_key(t)} #{n}"
            n += 1
        out[key] = t
    return out


def tool_differences(codex_tools: str, our_tools: str) -> list[Difference]:
    """The tool lists compared tool by tool (each a canonical JSON list, "" when absent)."""
    c = _keyed(json.loads(codex_tools) if codex_tools else [])
    o = _keyed(json.loads(our_tools) if our_tools else [])
    out = []
    for key, tool in c.items():
        if key not in o:
            out.append(Difference(f"tool {key}", f"only Codex sends this tool:\n{short_diff(pretty(tool), '')}", f"tool {key}"))
        elif parts.canonical(tool) != parts.canonical(o[key]):
            out.append(Difference(f"tool {key}", short_diff(pretty(tool), pretty(o[key])), f"tool {key}"))
    for key, tool in o.items():
        if key not in c:
            out.append(Difference(f"tool {key}", f"only promptspec sends this tool:\n{short_diff('', pretty(tool))}", f"tool {key}"))
    shared_c = [k for k in c if k in o]
    shared_o = [k for k in o if k in c]
    if shared_c != shared_o:
        out.append(Difference("tools order", short_diff("\n".join(shared_c), "\n".join(shared_o)), "tools order"))
    return out


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

    def differ(part: str, diff: str, name: str = "") -> None:
        out.identical = False
        out.differences.append(Difference(part, diff, name))

    if prompt is not None and c.prompt is None:  # None: a later request, compared whole
        differ("input (last item)", "Codex's request does not end with the turn's prompt")
    if (c.instructions is None) != (o.instructions is None):
        where = "the instructions field" if c.instructions is not None else "a developer message"
        differ("instructions", f"Codex sends the base instructions in {where}; promptspec does not")
    elif c.instructions is not None and c.instructions != o.instructions:
        differ("instructions", short_diff(c.instructions, o.instructions or ""))
    _compare_items(c_items, list(o.items), differ, out)
    if compare_tools:
        for d in tool_differences(c.tools, o.tools):
            differ(d.part, d.diff, d.name)
        if c.params != o.params:
            differ("request parameters", short_diff(c.params.replace(",\"", ",\n\""), o.params.replace(",\"", ",\n\"")))
        if c.keys != o.keys:
            differ("body key order", f"codex {', '.join(c.keys)} vs promptspec {', '.join(o.keys)}")
    return out


def _compare_items(c_items: list[parts.Item], o_items: list[parts.Item], differ, out: Outcome) -> None:
    """Input items by position, every differing part; a mismatch of kind or role
    ends the walk, since the items after it no longer line up."""
    for n, (ci, oi) in enumerate(zip(c_items, o_items)):
        label = f"input[{n}] {ci.role}"
        if (ci.kind, ci.role) != (oi.kind, oi.role):
            differ(label, f"Codex sends a {ci.role} {ci.kind}, promptspec a {oi.role} {oi.kind}", "input items")
            return
        for k, ((cn, ct), (on, ot)) in enumerate(zip(ci.parts, oi.parts), 1):
            if ct != ot:
                differ(f"{label} part {k} ({cn})", short_diff(ct, ot))
        if len(ci.parts) != len(oi.parts):
            extra = ci.parts[len(oi.parts):] or oi.parts[len(ci.parts):]
            who = "Codex" if len(ci.parts) > len(oi.parts) else "promptspec"
            differ(f"{label} part {min(len(ci.parts), len(oi.parts)) + 1} ({extra[0][0]})",
                   f"only {who} sends this part: {extra[0][1][:80]!r}")
        if ci.fields != oi.fields:
            differ(f"{label} keys", f"codex {ci.fields or '{}'} vs promptspec {oi.fields or '{}'}", "input item keys")
        if ci.metadata != oi.metadata and ci.metadata:
            if "item metadata" not in out.not_modelled:
                out.not_modelled.append("item metadata")
    if len(c_items) != len(o_items):
        longer = c_items if len(c_items) > len(o_items) else o_items
        who = "Codex" if longer is c_items else "promptspec"
        extra = longer[min(len(c_items), len(o_items))]
        differ(f"input[{min(len(c_items), len(o_items))}] {extra.role}",
               f"only {who} sends this item ({', '.join(n for n, _ in extra.parts)})", "input items")
