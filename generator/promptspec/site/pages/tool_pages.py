"""Tools on the site: the Tools catalog (one page per tool), the tools part of
each variant page and the tool comparison on model pages.

A tool's tokens are an offline count of its definition's JSON exactly as the
request serialises it (compact); the API's own accounting of tool
definitions is not public, so every page that shows the figure says so
(`COUNT_NOTE`).  Definitions are shown pretty-printed and escaped like any
prompt text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...assemble.request import Variant
from ...spec.model import Tool
from ...measure.encodings import codex_estimate, get_encoding
from ..index import SiteIndex, spread
from ..html.markup import Cell, block, h, ident, link, num, pre, table
from ..html.page_parts import conditions, join_blocks, page_head, para
from .summary import vlink

COUNT_NOTE = (
    "Tool tokens are an offline count, with the model's encoding, of the tool JSON exactly as serialised "
    "in the request (compact); the API's own accounting of tool definitions is not public."
)
PLACES = {"field": "the request's <code>tools</code> field", "input": "an <code>additional_tools</code> input item"}


@dataclass(frozen=True)
class ToolUse:
    variant: Variant
    position: int  # 1-based in send order; 0 for a deferred tool
    tokens: int  # 0 for a deferred tool (not sent as JSON)
    estimate: int
    placement: str  # "field" | "input" | "deferred"


def tool_uses(idx: SiteIndex) -> dict[str, list[ToolUse]]:
    """Every variant that carries each tool, in matrix order."""
    found = idx.memo.get("tool-uses")
    if found is None:
        found = idx.memo["tool-uses"] = {t.name: [] for t in idx.spec.tools}
        for v in idx.variants:
            m, req = idx.measure[v], idx.request[v]
            for i, (t, n, e) in enumerate(zip(req.tools, m.tool_counts, m.tool_estimates), 1):
                found[t.name].append(ToolUse(v, i, n, e, req.tool_placement))
            for t in req.deferred:
                found[t.name].append(ToolUse(v, 0, 0, 0, "deferred"))
    return found


def _description_tokens(idx: SiteIndex, t: Tool, uses: list[ToolUse]) -> dict[str, int]:
    """The description tokens of tool file `t` by encoding of the variants
    that carry it.  Taken from what the measure stage counted (through the
    token cache), so a warm build loads no tokenizer for this page; counted
    here only for an encoding whose variants all carry an `exact:` text of
    the tool with another description."""
    out: dict[str, int] = {}
    pending: set[str] = set()
    for u in uses:
        m, req = idx.measure[u.variant], idx.request[u.variant]
        if m.encoding in out:
            continue
        pending.add(m.encoding)
        for carried, n in zip((*req.tools, *req.deferred), m.description_counts):
            if carried.name == t.name and carried.sent_description == t.sent_description:
                out[m.encoding] = n
                break
    text = t.sent_description
    for e in pending - set(out):
        out[e] = len(get_encoding(e).encode_ordinary(text)) if text else 0
    return out


def tools_index_page(idx: SiteIndex) -> str:
    page = idx.tool_page()
    uses = tool_uses(idx)
    out = page_head("Tools", "Tool catalog")
    if not idx.spec.tools:
        out.append(block(para("This spec defines no tools (see <code>tools/</code> in docs/spec-format.md)."), cls="ps-intro"))
        return join_blocks(out)
    out.append(block(para(
        f"{len(idx.spec.tools)} tool definitions, in send order. Each is sent exactly as defined; "
        "which variants carry it follows its conditions. " + h(COUNT_NOTE)
    ), cls="ps-intro"))
    out.append("")
    owners = {t.owner for t in idx.spec.tools}
    one_owner = len(owners) == 1  # a column that says the same in every row only takes width (an import: all "codex")
    if one_owner:
        out.append(block(para(f"Owner of every tool: {h(next(iter(owners))) or '–'}."), cls="ps-dim"))
        out.append("")
    rows = []
    for t in idx.spec.tools:
        us = uses.get(t.name, [])
        sent = [u for u in us if u.placement != "deferred"]
        rows.append([
            link(idx.href(page, idx.tool_page(t.name)), f"<code>{ident(t.name)}</code>"),
            f"<code>{ident(t.tool_name)}</code>",
            h(t.kind) + (" (deferred)" if t.deferred else ""),
            *([] if one_owner else [h(t.owner) or "–"]),
            h(t.description),
            Cell(f"{len({u.variant for u in us})} / {len(idx.variants)}", "ps-r"),
            Cell(spread([u.tokens for u in sent]) if sent else "–", "ps-r"),
        ])
    head = ["tool", "sent as", "kind", *([] if one_owner else ["owner"]), "description", Cell("variants", "ps-r"), Cell("tokens", "ps-r")]
    out += [table(head, rows), ""]
    return join_blocks(out)


def tool_page(idx: SiteIndex, name: str) -> str:
    page = idx.tool_page(name)
    t = next(x for x in idx.spec.tools if x.name == name)
    us = tool_uses(idx).get(name, [])
    out = page_head(name, f"Tool {name}")
    out.append(block(para(link(idx.href(page, idx.tool_page()), "All tools")), cls="ps-crumbs"))
    out.append("")
    counted = _description_tokens(idx, t, us)
    desc_tokens = ", ".join(f"{num(counted[e])} ({h(e)})" for e in sorted(counted)) or "–"
    sent = [u for u in us if u.placement != "deferred"]
    rows: list[list[str | Cell]] = [
        [Cell("description", header=True), h(t.description) or "–"],
        [Cell("owner", header=True), h(t.owner) or "–"],
        [Cell("sent as", header=True), f"<code>{h(t.tool_name)}</code> ({h(t.kind)})"],
        [Cell("when", header=True), conditions(t.when)],
        [Cell("placement", header=True), "deferred: listed by name and description in a section, not sent as JSON" if t.deferred
         else ", ".join(sorted({PLACES[u.placement] for u in sent})) or "–"],
        [Cell("defined in", header=True), f"<code>{h(t.source)}</code>"],
        [Cell("definition tokens", header=True), (spread([u.tokens for u in sent]) + f" (Codex estimate {num(codex_estimate(t.serialized))}, "
         f"{num(len(t.serialized.encode('utf-8')))} bytes serialised)") if sent else "– (not sent)"],
        [Cell("description tokens", header=True), desc_tokens],
    ]
    out += [table([], rows, cls="ps-facts"), "", block(para(h(COUNT_NOTE)), cls="ps-dim"), ""]
    out += ["## Definition", "", pre(json.dumps(t.definition, indent=2, ensure_ascii=False) + "\n"), ""]
    out += [f"## Variants that carry it ({len({u.variant for u in us})})", ""]
    if not us:
        out += [block(para("No variant of the matrix carries this tool."), cls="ps-intro"), ""]
    elif len(us) > idx.list_limit:
        models = sorted({u.variant.model for u in us})
        out += [block(para(
            f"{len(us):,} variants, of models {', '.join(f'<code>{h(m)}</code>' for m in models)}; the "
            f"{link(idx.explorer_href(page, us[0].variant), 'Explorer')} shows any of them."
        ), cls="ps-intro"), ""]
    else:
        vrows = [[vlink(idx, page, u.variant), Cell(str(u.position) if u.position else "–", "ps-r"), h(u.placement),
                  Cell(num(u.tokens) if u.position else "–", "ps-r")] for u in us]
        out += [table(["variant", Cell("position", "ps-r"), "placement", Cell("tokens", "ps-r")], vrows, searchable=False), ""]
    return join_blocks(out)


def variant_tools(idx: SiteIndex, v: Variant, page: str) -> list[str]:
    """The "Tools" part of a variant page (empty when the spec has no tools)."""
    if not idx.spec.tools:
        return []
    m, req = idx.measure[v], idx.request[v]
    out = ["## Tools", ""]
    if req.tools:
        where = PLACES[req.tool_placement]
        intro = (f"{len(req.tools)} tool{'s' if len(req.tools) != 1 else ''} sent in {where}: {num(m.tools)} tokens "
                 f"(Codex estimate {num(m.tools_estimate)}) for the whole list, included in the total. {h(COUNT_NOTE)}")
    else:
        intro = "No tools are sent in this variant."
    out += [block(para(intro), cls="ps-intro", attrs={"id": "s-tools"}), ""]
    if req.tools:
        rows = [
            [Cell(f"{i:02}", "ps-r"), link(idx.href(page, idx.tool_page(t.name)), f"<code>{h(t.tool_name)}</code>"), h(t.kind),
             Cell(num(n), "ps-r"), Cell(num(e), "ps-r"), f"<code>{h(t.source)}</code>"]
            for i, (t, n, e) in enumerate(zip(req.tools, m.tool_counts, m.tool_estimates), 1)
        ]
        out += [table([Cell("#", "ps-r"), "tool", "kind", Cell("tokens", "ps-r"), Cell("Codex estimate", "ps-r"), "source"], rows, cls="ps-tools"), ""]
    if req.deferred:
        items = ", ".join(link(idx.href(page, idx.tool_page(t.name)), f"<code>{h(t.tool_name)}</code>") for t in req.deferred)
        out += [block(para(f"Deferred (listed in a section, not sent as JSON): {items}."), cls="ps-intro"), ""]
    return out


def _carriers(idx: SiteIndex) -> dict[str, set[str]]:
    """The models some variant of which carries each tool: the same for every
    model page, so made once per build."""
    found = idx.memo.get("tool-carriers")
    if found is None:
        uses = tool_uses(idx)
        found = idx.memo["tool-carriers"] = {t.name: {u.variant.model for u in uses.get(t.name, [])} for t in idx.spec.tools}
    return found  # type: ignore[no-any-return]


def model_tools(idx: SiteIndex, slug: str, page: str) -> list[str]:
    """On a model page: which tools each model sends, this model first."""
    if not idx.spec.tools:
        return []
    models = [slug] + [m.slug for m in idx.spec.models if m.slug != slug]
    carried = _carriers(idx)
    differs = [t for t in idx.spec.tools if len({m in carried[t.name] for m in models}) > 1]
    out = ["## Tools compared with other models", ""]
    out += [block(para(
        "✓: some variant of the model carries the tool (d: deferred). "
        + (f"{len(differs)} of {len(idx.spec.tools)} tools differ between models." if differs else "Every model carries the same tools.")
    ), cls="ps-intro"), ""]
    rows = []
    for t in idx.spec.tools:
        mark = "d" if t.deferred else "✓"
        cells = [Cell(mark if m in carried[t.name] else "–", "ps-c") for m in models]
        name = link(idx.href(page, idx.tool_page(t.name)), f"<code>{h(t.name)}</code>")
        rows.append([name + (" <small>differs</small>" if t in differs else ""), *cells])
    out += [table(["tool", *(f"<strong>{h(m)}</strong>" if m == slug else h(m) for m in models)], rows, searchable=False), ""]
    return out
