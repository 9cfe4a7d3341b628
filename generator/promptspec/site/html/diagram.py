"""Diagrams as plain HTML and CSS: the send order of a request and the
spec's layout, drawn by promptspec itself.

Mermaid needs a script (from a CDN unless the site ships one), draws nothing
offline, in print or in a feed reader, and its labels are fixed colours that
dark mode cannot restyle.  These diagrams are boxes and arrows made of
elements the page's own stylesheet (assets/promptspec.css, `.ps-flow`) lays
out: messages left to right, wrapping onto the next line on a narrow screen,
sections top to bottom inside each message, every box a link to the text it
stands for.  Spec strings go through `h()` like everywhere else on a page.

Mermaid stays available (mermaid.py) for sites that opt in with the
plugin's `mermaid_js` or `diagrams: mermaid`, and for pull-request comments,
where GitHub draws it.

The wrapper is a `<figure>` marked `data-search-exclude`: Material's indexer
ends an exclusion at the first closing tag of the same name, and a figure
holds no other figure.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ...assemble.export import section_label
from ...spec.model import SLOT_ROLE, Spec
from .markup import h, ident

ARROW = '<span class="ps-flow-arrow" aria-hidden="true">→</span>'

GROUP_TITLES = {
    "developer": "developer message",
    "separate_developer": "separate developer messages",
    "user": "user message",
}


def figure(items: Iterable[str], *, label: str, cls: str = "") -> str:
    """Boxes joined by arrows, in one search-excluded figure (one line per
    element and no blank line, so Markdown passes it through as one block)."""
    inner = f"\n{ARROW}\n".join(items)
    extra = f" {cls}" if cls else ""
    return (
        f'<figure class="ps-flow{extra}" data-search-exclude role="group" aria-label="{h(label)}">\n'
        f"{inner}\n</figure>"
    )


def node(lines: Sequence[str], *, role: str, href: str | None = None, cls: str = "") -> str:
    """One box: the first line bold, the rest smaller; already-escaped HTML."""
    body = "".join(
        f'<span class="ps-flow-title">{line}</span>' if i == 0 else f'<span class="ps-flow-line">{line}</span>'
        for i, line in enumerate(lines)
    )
    if href is not None:
        body = f'<a href="{h(href)}">{body}</a>'
    extra = f" {cls}" if cls else ""
    return f'<div class="ps-flow-node ps-flow-{h(role)}{extra}">{body}</div>'


def group(title: str, nodes: Sequence[str], *, role: str) -> str:
    """A message (or message group): a titled column of boxes, top to bottom."""
    inner = "\n".join(f"<li>{n}</li>" for n in nodes)
    return (
        f'<div class="ps-flow-group ps-flow-{h(role)}"><div class="ps-flow-head">{title}</div>\n'
        f'<ol class="ps-flow-list">\n{inner}\n</ol></div>'
    )


def share(tokens: int, total: int) -> str:
    from .markup import pct

    return pct(100.0 * tokens / (total or 1))


def ordering(
    uses: Sequence, base, base_tokens: int, total: int, message_roles: Sequence[str],
    tools: tuple[Sequence[str], str, int] | None = None,
) -> str:
    """A request in send order: the instructions, then each message with its
    sections.  `uses` are index.SectionUse records in send order; every box
    links to the section's anchor on the variant page (variant.section_id).
    `tools`: (tool names, placement "field" or "input", tokens) when the
    request sends tools: one box after the instructions (the body's `tools`
    field, beside the input, or an additional_tools input item)."""
    rule = base.rule + (f": {base.detail}" if base.detail else "")
    items = [node(
        ["instructions", f"<code>{ident(rule)}</code>", f"{base_tokens:,} tokens · {share(base_tokens, total)}"],
        role="base", href="#s-base",
    )]
    if tools is not None:
        names, placement, tokens = tools
        where = "additional_tools item" if placement == "input" else "tools field, beside the input"
        items.append(node(
            [f"tools ({len(names)})", h(where), h(_short(", ".join(names), 48)), f"{tokens:,} tokens · {share(tokens, total)}"],
            role="tools", href="#s-tools",
        ))
    for i, role in enumerate(message_roles):
        mine = [u for u in uses if u.message == i]
        boxes = []
        for u in mine:
            s = u.section
            # An unmarked section is labelled by its opening text (prompt text).
            boxes.append(node(
                [f'<span class="ps-idx">[{u.index:02}]</span> {ident(s.fragment)}',
                 f"<code>{h(_short(section_label(s), 48))}</code>",
                 f"{h(s.role)} · {u.tokens:,} tokens · {share(u.tokens, total)}"],
                role=s.role, href=f"#s-{u.message}-{u.index}",
            ))
        n = sum(u.tokens for u in mine)
        title = f'<span class="ps-idx">{i:02}</span> {h(role)} message · {n:,} tokens'
        items.append(group(title, boxes, role=role))
    return figure(items, label="send order: instructions, then each message and its sections")


def assembly(spec: Spec, fragments_by_slot: dict[str, Sequence[str]], fragment_href=None) -> str:
    """The spec's layout: base instructions, then each message group with its
    slots in order and the fragments that fill each slot (linked through
    `fragment_href(name)` when given)."""
    items = [node(
        ["base instructions", "override, else model template", "+ personality, else base_instructions"],
        role="base",
    )]
    for group_name, slots in spec.layout.items():
        role = SLOT_ROLE[group_name]
        boxes = []
        for slot in slots or ():
            names = list(fragments_by_slot.get(slot, ()))
            lines = [f"slot {ident(slot)}"]
            for name in names:
                label = ident(name)
                lines.append(f'<a href="{h(fragment_href(name))}">{label}</a>' if fragment_href else label)
            if not names:
                lines.append("(no fragment)")
            boxes.append(node(lines, role=role if names else "empty"))
        if not boxes:  # a group with no slots sends nothing: an empty box only drew a grey frame
            continue
        title = f"{h(GROUP_TITLES.get(group_name, group_name))} · {h(role)}"
        items.append(group(title, boxes, role=role))
    return figure(items, label="layout: base instructions, then each message group and its slots")


def _short(text: str, limit: int) -> str:
    s = " ".join(text.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
