"""Conversations on the site: one page per script of `conversations:`, a
section per model, each request of the thread with what it adds.

Every later request re-sends the ones before it, so the page shows per
request its whole size (tokens, % of the usable window), what it adds (the
new items, exactly as sent, escaped like any prompt text) and, where a
compaction happens, what the compaction request costs and what the rebuilt
history saves.
"""

from __future__ import annotations

from typing import Sequence

from ...measure.conversation import Run
from ..index import SiteIndex
from ..html.markup import Cell, block, code, h, link, num, pct, pre, signed, table
from ..html.page_parts import join_blocks, page_head, para


def pages(idx: SiteIndex, runs: Sequence[Run]) -> dict[str, str]:
    by_name: dict[str, list[Run]] = {}
    for run in runs:
        by_name.setdefault(run.name, []).append(run)
    out = {idx.conversation_page(): index_page(idx, by_name)}
    for name, group in by_name.items():
        out[idx.conversation_page(name)] = conversation_page(idx, name, group)
    return out


def _kind(run: Run, i: int) -> str:
    treq = run.thread[i]
    if treq.kind == "compaction":
        return f"compaction ({h(treq.reason)})"
    return "turn, on the rebuilt history" if treq.rebuilt else "turn"


def index_page(idx: SiteIndex, by_name: dict[str, list[Run]]) -> str:
    page = idx.conversation_page()
    rows, described = [], []
    for name, group in by_name.items():
        target = idx.conversation_page(name)
        described.append(f"<li>{link(idx.href(page, target), h(name))}: {h(group[0].description) if group else ''}</li>")
        for run in group:
            figs = run.figures
            peak = max(figs, key=lambda f: f.total)
            compactions = sum(t.kind == "compaction" for t in run.thread)
            rows.append([link(idx.href(page, target, anchor=_anchor(run)), h(name)), code(run.variant.model),
                         num(len(run.thread)), num(compactions), Cell(num(peak.total), "ps-num"), Cell(pct(peak.percent), "ps-num")])
    parts = page_head("Conversations")
    parts.append(block(para(
        "Every request a thread sends, not only the first: each later request re-sends the input before it, the "
        "assistant's answer and the context updates for what changed; a compaction is a request of its own, after "
        "which the history is rebuilt. The scripts are the spec's <code>conversations:</code>; each runs from the "
        "first variant of every model."), cls="ps-intro"))
    parts += [block(described, cls="ps-conversation-list", tag="ul"), ""]
    parts.append(table(["conversation", "model", "requests", "compactions", "largest request", "% usable"], rows, searchable=False))
    return join_blocks(parts)


def _anchor(run: Run) -> str:
    return "from-" + run.variant.slug.replace(".", "-").lower()


def conversation_page(idx: SiteIndex, name: str, group: list[Run]) -> str:
    parts = page_head(f"Conversation {name}")
    if group and group[0].description:
        parts.append(para(h(group[0].description)))
    parts.append(para(link(idx.href(idx.conversation_page(name), idx.conversation_page()), "All conversations")))
    for run in group:
        parts += ["", block("", cls="ps-anchor", attrs={"id": _anchor(run)}), "", f"## From {h(run.variant.id)}", ""]
        parts.append(_table(run))
        for i in range(len(run.thread)):
            parts.append(_request(run, i))
    return join_blocks(parts)


def _table(run: Run) -> str:
    rows, notes = [], []
    figs = run.figures
    for i, fig in enumerate(figs):
        treq = run.thread[i]
        kind = "compaction" if treq.kind == "compaction" else "turn, rebuilt" if treq.rebuilt else "turn"
        rows.append([num(fig.index), num(fig.step), kind, code(fig.model), Cell(num(fig.total), "ps-num"),
                     Cell(pct(fig.percent), "ps-num"), Cell(num(fig.added), "ps-num"), Cell(signed(fig.change), "ps-num")])
        if treq.kind == "compaction":
            after = (f"; the next request, on the rebuilt history, has {num(figs[i + 1].total)} tokens "
                     f"({signed(figs[i + 1].total - figs[i - 1].total)} against the last turn before it)") if 0 < i < len(figs) - 1 else ""
            notes.append(f"<li>Request {fig.index}: compaction ({h(treq.reason)}) sends {num(fig.total)} tokens{after}.</li>")
    out = table(["request", "step", "kind", "model", "tokens", "% usable", "adds", "change"], rows, searchable=False)
    if notes:
        out += "\n\n" + block(notes, cls="ps-conversation-compactions", tag="ul")
    return out


def _request(run: Run, i: int) -> str:
    treq, m = run.thread[i], run.measures[i]
    fig = run.figures[i]
    items = []
    for j, message in enumerate(treq.new_messages, treq.new):
        counts = m.sections[j]
        for section, n in zip(message.sections, counts):
            items.append(f"<p><strong>{h(message.role)}</strong> · {code(section.fragment)} · {num(n)} tokens</p>"
                         + pre(section.text))
    where = "the whole input" if i == 0 else "the whole input, rebuilt" if treq.rebuilt else f"after {num(treq.new)} re-sent items"
    summary = f"Request {fig.index} ({_kind(run, i)}): adds {num(fig.added)} tokens, {where}"
    return "\n" + block([f"<summary>{summary}</summary>", *items], cls="ps-conversation-request", tag="details") + "\n"
