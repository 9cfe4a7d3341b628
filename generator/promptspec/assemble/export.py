"""Plain renderings of an assembled request: Responses-API JSON, layout, text.

These are the formats people paste into tickets and diff in reviews, so they
are deterministic to the byte (sorted keys where order is not meaningful,
`\\n` line endings, a trailing newline).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from .request import Request, Section

LAYOUT_LABEL_CHARS = 60


def responses_payload(request: Request) -> dict[str, Any]:
    """The request body in the OpenAI Responses API shape Codex sends."""
    body: dict[str, Any] = {"model": request.model}
    if request.instructions_field:
        body["instructions"] = request.base.text
    body["input"] = [
        {
            "type": "message",
            "role": message.role,
            "content": [{"type": "input_text", "text": s.text} for s in message.sections],
        }
        for message in request.messages
    ]
    return body


def dumps(data: Any) -> str:
    """Our one JSON style: stable, readable, non-ASCII kept as is."""
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def section_label(section: Section) -> str:
    """The start marker names a section; unmarked ones show their opening text."""
    if section.start:
        label = section.start.split("\n", 1)[0].strip() or section.start.strip()
    else:
        label = section.text.strip().replace("\n", "\\n")
    if len(label) > LAYOUT_LABEL_CHARS:
        label = label[:LAYOUT_LABEL_CHARS] + "..."
    return label or f"({section.fragment})"


def layout(request: Request) -> str:
    """One line per message, in the style of Codex's model-visible-layout snapshots:
    `00:message/developer[3]: [01] <permissions instructions> [02] ...`."""
    lines = []
    for i, message in enumerate(request.messages):
        parts = " ".join(f"[{j:02}] {section_label(s)}" for j, s in enumerate(message.sections, 1))
        lines.append(f"{i:02}:message/{message.role}[{len(message.sections)}]: {parts}")
    return "\n".join(lines) + "\n"


def text_view(request: Request) -> str:
    """The whole request as readable text: base instructions, then every
    message and section with a header line, bodies exactly as sent."""
    v = request.variant
    out = [f"=== variant {v.id}", f"=== instructions (rule: {request.base.rule}{': ' + request.base.detail if request.base.detail else ''})", request.base.text]
    if not request.base.text.endswith("\n"):
        out.append("")
    for i, message in enumerate(request.messages):
        out.append(f"=== {i:02} message/{message.role}")
        for j, s in enumerate(message.sections, 1):
            out.append(f"--- [{j:02}] {s.fragment} ({s.slot}, from {s.source})")
            out.append(s.text if s.text.endswith("\n") else s.text + "\n")
    for note in request.notes:
        out.append(f"!!! {note}")
    return "\n".join(out).rstrip("\n") + "\n"


def with_tokens(request: Request, counts: Mapping[str, Any]) -> dict[str, Any]:
    """`render --format json`: the Responses-API payload with one extra
    top-level key, `tokens`, so every payload field stays exactly as sent and
    `del(.tokens)` gives the request body."""
    return {**responses_payload(request), "tokens": counts}
