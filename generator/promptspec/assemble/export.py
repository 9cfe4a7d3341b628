"""Plain renderings of an assembled request: Responses-API JSON, layout, text.

These are the formats people paste into tickets and diff in reviews, so they
are deterministic to the byte (sorted keys where order is not meaningful,
`\\n` line endings, a trailing newline).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..spec.readers.tools import serialize
from .request import Message, Request, Section

LAYOUT_LABEL_CHARS = 60


ADDITIONAL_TOOLS = "additional_tools"


def tool_list(request: Request) -> list[Any]:
    """The tools as the request carries them (definitions verbatim, in order)."""
    return [t.definition for t in request.tools]


def tools_json(request: Request) -> str:
    """The tool list serialised exactly as in the request body: what is counted."""
    return serialize(tool_list(request))


def tools_item(request: Request) -> dict[str, Any]:
    """Codex's `additional_tools` input item (its volatile `id` left out)."""
    return {"type": ADDITIONAL_TOOLS, "role": "developer", "tools": tool_list(request)}


def message_item(message: Message) -> dict[str, Any]:
    """One input item: a message of input_text parts; an assistant answer
    (re-sent in a later request) is output_text, with the keys the spec's
    `turns.reply` says the agent echoes."""
    kind = "output_text" if message.role == "assistant" else "input_text"
    extra = dict(message.part_fields)
    content = [{"type": kind, "text": s.text, **extra} for s in message.sections]
    head = dict(message.fields) if message.fields else {"type": "message", "role": message.role}
    return {**head, "content": content}


def responses_payload(request: Request) -> dict[str, Any]:
    """The whole Responses API body, keys in the order Codex sends them
    (`request.body_order`): model, instructions, input, tools and the
    parameters.  Tools go to the `tools` field, or to an `additional_tools`
    item first in `input` when the layout places them there."""
    messages = [message_item(message) for message in request.messages]
    in_input = request.tool_placement == "input"
    params = dict(request.params)
    body: dict[str, Any] = {}
    for key in request.body_order:
        if key == "model":
            body[key] = request.model
        elif key == "instructions":
            if request.instructions_field:
                body[key] = request.base.text
        elif key == "input":
            body[key] = ([tools_item(request)] if in_input and (request.tools or request.empty_tools_item) else []) + messages
        elif key == "tools":
            if not in_input:
                body[key] = tool_list(request)
        elif key in params:
            body[key] = params[key]
    return body


def body_json(request: Request) -> str:
    """The body as one compact line, the way it goes over the wire."""
    return serialize(responses_payload(request)) + "\n"


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
    offset = 0
    names = " ".join(f"[{j:02}] {t.tool_name}" for j, t in enumerate(request.tools, 1))
    if request.tools and request.tool_placement == "input":
        lines.append(f"00:{ADDITIONAL_TOOLS}/developer[{len(request.tools)}]: {names}")
        offset = 1
    for i, message in enumerate(request.messages):
        parts = " ".join(f"[{j:02}] {section_label(s)}" for j, s in enumerate(message.sections, 1))
        lines.append(f"{i + offset:02}:message/{message.role}[{len(message.sections)}]: {parts}")
    if request.tools and request.tool_placement == "field":
        lines.append(f"tools[{len(request.tools)}]: {names}")
    if request.deferred:
        lines.append(f"deferred[{len(request.deferred)}]: " + " ".join(f"[{j:02}] {t.tool_name}" for j, t in enumerate(request.deferred, 1)))
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
    if request.tools:
        where = "input item additional_tools" if request.tool_placement == "input" else "field tools"
        out.append(f"=== tools ({where})")
        for j, t in enumerate(request.tools, 1):
            out.append(f"--- [{j:02}] {t.tool_name} ({t.kind}, from {t.source})")
            out.append(json.dumps(t.definition, indent=2, ensure_ascii=False) + "\n")
    for t in request.deferred:
        out.append(f"=== deferred {t.tool_name} (from {t.source}): {t.sent_description}")
    for key, value in request.params:
        out.append(f"=== {key}: {json.dumps(value, ensure_ascii=False)}")
    for note in request.notes:
        out.append(f"!!! {note}")
    return "\n".join(out).rstrip("\n") + "\n"


def with_tokens(request: Request, counts: Mapping[str, Any]) -> dict[str, Any]:
    """`render --format json`: the Responses-API payload with one extra
    top-level key, `tokens`, so every payload field stays exactly as sent and
    `del(.tokens)` gives the request body."""
    return {**responses_payload(request), "tokens": counts}
