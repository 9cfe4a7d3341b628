"""Mermaid diagrams of a request's send order and of the spec's layout.

Labels are always double-quoted and every ASCII character outside
`[A-Za-z0-9 ._-]` is written as a Mermaid entity code (`#34;`), so a spec
string can neither end a label, start a new statement, form HTML, nor add a
`click` handler.  Node ids are generated (`n0`, `n1`...), never spec names.
Styles avoid `#rgb;` sequences, which Mermaid would read as entities.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

from ...assemble.export import section_label
from ...assemble.request import Request
from ...measure.figures import Measure
from ...spec.model import SLOT_ROLE, Spec

_SAFE = re.compile(r"[A-Za-z0-9 ._-]")
BR = "<br/>"
"""Our own line break inside a label (never produced from spec text)."""

_GROUP_TITLES = {
    "developer": "developer message",
    "separate_developer": "separate developer messages",
    "user": "user message",
}

CLASSES = (
    "classDef base fill:#eceff1,stroke:#607d8b,color:#263238",
    "classDef developer fill:#e3f2fd,stroke:#1e88e5,color:#0d47a1",
    "classDef user fill:#e8f5e9,stroke:#43a047,color:#1b5e20",
    "classDef tools fill:#efebe9,stroke:#8d6e63,color:#3e2723",
    "classDef empty fill:#fafafa,stroke:#bdbdbd,color:#757575,stroke-dasharray:4 3",
)


def text(value: object, limit: int | None = None) -> str:
    """One line of label text, entity-encoded (see module docstring)."""
    return _text(str(value), limit)


@functools.lru_cache(maxsize=4096)
def _text(value: str, limit: int | None) -> str:
    # Cached: a site repeats the same labels (fragment names, markers, token
    # counts) on every variant page.
    s = " ".join(value.split())
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    out = []
    for ch in s:
        out.append(ch if ch >= "\x80" or _SAFE.match(ch) else f"#{ord(ch)};")
    return "".join(out)


def label(*lines: str) -> str:
    """A quoted label from already-encoded lines."""
    return '"' + BR.join(lines) + '"'


def fence(diagram: str) -> str:
    """A ```mermaid fenced block, in a search-excluded wrapper."""
    return (
        '<div class="ps-diagram" data-search-exclude="" markdown="1">\n\n'
        f"```mermaid\n{diagram.rstrip()}\n```\n\n</div>"
    )


def _tokens(n: int) -> str:
    return text(f"{n:,} tokens")


def ordering(request: Request, measure: Measure) -> str:
    """The request in send order: instructions, then each message (left to
    right) with its sections top to bottom, each node showing role and tokens.

    Edges join whole messages, not nodes across them: Mermaid keeps a
    subgraph's own direction only when no edge crosses its border."""
    lines = ["flowchart LR"]
    rule = request.base.rule + (f": {request.base.detail}" if request.base.detail else "")
    lines.append(f"  n0[{label('instructions', text(rule, 48), _tokens(measure.base))}]:::base")
    chain = ["n0"]
    k = 0
    if request.tools:
        # The tool list: an input item first, or the request's tools field (beside the input).
        where = "additional_tools item" if request.tool_placement == "input" else "tools field"
        lines.append(f"  t0[{label(text(f'tools · {where}'), text(', '.join(t.tool_name for t in request.tools), 48), _tokens(measure.tools))}]:::tools")
        if request.tool_placement == "input":
            chain.append("t0")
    for i, message in enumerate(request.messages):
        sub = f"m{i}"
        chain.append(sub)
        lines.append(f"  subgraph {sub}[{label(text(f'{i:02} {message.role} message · {sum(measure.sections[i]):,} tokens'))}]")
        lines.append("    direction TB")
        nodes = []
        for j, section in enumerate(message.sections):
            k += 1
            node = f"n{k}"
            nodes.append(node)
            marker = section_label(section)
            lines.append(
                f"    {node}[{label(text(f'[{j + 1:02}] {section.fragment}'), text(marker, 40), text(f'{section.role} · {measure.sections[i][j]:,} tokens'))}]:::{section.role}"
            )
        if len(nodes) > 1:
            lines.append("    " + " --> ".join(nodes))
        lines.append("  end")
    if len(chain) > 1:
        lines.append("  " + " --> ".join(chain))
    if request.tools and request.tool_placement == "field":
        lines.append("  n0 -.- t0")
    lines.extend("  " + c for c in CLASSES)
    return "\n".join(lines) + "\n"


def assembly(spec: Spec, fragments_by_slot: dict[str, Sequence[str]]) -> str:
    """The spec's layout: base instructions, then each message group (left to
    right) with its slots in order and the fragments that fill each slot."""
    lines = ["flowchart LR"]
    lines.append(
        f"  base[{label('base instructions', text('override, else model template', 48), text('+ personality, else base_instructions', 48))}]:::base"
    )
    chain = ["base"]
    k = 0
    for g, (group, slots) in enumerate(spec.layout.items()):
        if not slots:  # a group with no slots sends nothing (as diagram.assembly)
            continue
        role = SLOT_ROLE[group]
        sub = f"g{g}"
        chain.append(sub)
        lines.append(f"  subgraph {sub}[{label(text(_GROUP_TITLES.get(group, group) + ' · ' + role))}]")
        lines.append("    direction TB")
        nodes = []
        for slot in slots:
            node = f"s{k}"
            k += 1
            nodes.append(node)
            names = list(fragments_by_slot.get(slot, ()))
            body = [f"slot {text(slot)}", *(text(n) for n in names)] if names else [f"slot {text(slot)}", "(no fragment)"]
            lines.append(f"    {node}[{label(*body)}]:::{role if names else 'empty'}")
        if len(nodes) > 1:
            lines.append("    " + " --> ".join(nodes))
        lines.append("  end")
    lines.append("  " + " --> ".join(chain))
    lines.extend("  " + c for c in CLASSES)
    return "\n".join(lines) + "\n"
