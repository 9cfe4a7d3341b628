"""One page per axis value (models, personalities, modes, extra axes): its
variants, and side by side with every other value of the axis.
"""

from __future__ import annotations

from collections import OrderedDict
from statistics import mean

from ...assemble.request import Variant
from . import summary as site_summary
from . import tool_pages
from ..index import SectionUse, SiteIndex, spread
from ..html.markup import (
    Cell,
    block,
    h,
    ident,
    link,
    md_inline,
    num,
    pct,
    signed,
    table,
)
from ..html.page_parts import axis_title, join_blocks, page_head, para

# ---------------------------------------------------------------------------
# Axis pages (models, personalities, modes, extra axes)


def axis_index_page(idx: SiteIndex, axis: str) -> str:
    page = idx.axis_page(axis)
    values = dict(idx.axes)[axis]
    out = page_head(axis_title(axis))
    headers: list[str | Cell] = ["name", "display name", "description", Cell("variants", "ps-r"), Cell("tokens", "ps-r"), Cell("mean", "ps-r")]
    if axis == "model":
        headers += [Cell("context window", "ps-r"), Cell("usable", "ps-r")]
    rows = []
    for value in values:
        vs = idx.with_value(axis, value)
        totals = [idx.totals[v] for v in vs]
        row: list[str | Cell] = [
            link(idx.href(page, idx.axis_page(axis, value)), f"<code>{h(value)}</code>"),
            h(idx.display(axis, value)),
            h(idx.description(axis, value)),
            Cell(str(len(vs)), "ps-r"),
            Cell(spread(totals), "ps-r"),
            Cell(num(round(mean(totals))) if totals else "–", "ps-r"),
        ]
        if axis == "model":
            m = idx.spec.model(value)
            row += [Cell(num(m.context_window), "ps-r"), Cell(num(m.usable_window), "ps-r")]
        rows.append(row)
    out += [table(headers, rows), ""]
    return join_blocks(out)


def _value_facts(idx: SiteIndex, axis: str, value: str) -> str:
    rows: list[list[str | Cell]] = [
        [Cell("display name", header=True), h(idx.display(axis, value))],
        [Cell("description", header=True), h(idx.description(axis, value)) or "–"],
    ]
    spec = idx.spec
    if axis == "model":
        m = spec.model(value)
        rows += [
            [Cell("context window", header=True), num(m.context_window)],
            [Cell("usable window", header=True), f"{num(m.usable_window)} ({m.effective_context_window_percent}% of the context window)"],
            [Cell("auto-compact at", header=True), num(m.compact_limit)],
            [Cell("instructions", header=True), "template with personality variables" if m.instructions_template is not None else "<code>base_instructions</code>"],
        ]
        vs = idx.with_value(axis, value)
        if vs:
            rows.append([Cell("encoding", header=True), f"<code>{h(idx.measure[vs[0]].encoding)}</code>"])
    elif axis in ("personality", "mode"):
        choice = spec.personality(value) if axis == "personality" else spec.mode(value)
        rows.append([Cell("template", header=True), f"<code>{h(choice.template)}</code> ({h(choice.engine)})" if choice.template else "none"])
    return table([], rows, cls="ps-facts")


def _diff(idx: SiteIndex, a: Variant, b: Variant) -> list[tuple[str, int]]:
    """Parts whose text differs between two variants, with a's minus b's tokens."""
    out = []
    ma, mb = idx.measure[a], idx.measure[b]
    if idx.request[a].base.text != idx.request[b].base.text:
        out.append(("instructions", ma.base - mb.base))
    sa, sb = idx.sections_by_fragment(a), idx.sections_by_fragment(b)
    names = list(sa) + [n for n in sb if n not in sa]
    for name in names:
        ua, ub = sa.get(name), sb.get(name)
        if ua is not None and ub is not None and ua.section.text == ub.section.text:
            continue
        out.append((name, (ua.tokens if ua else 0) - (ub.tokens if ub else 0)))
    return out


def _diff_html(parts: list[tuple[str, int]], a: Variant, b: Variant, idx: SiteIndex) -> str:
    if not parts:
        return '<span class="ps-dim">identical</span>'
    sa, sb = idx.sections_by_fragment(a), idx.sections_by_fragment(b)
    items = []
    for name, delta in parts:
        mark = "" if name == "instructions" else ("+" if name not in sb else ("−" if name not in sa else ""))
        items.append(f'<span class="ps-diff" title="{"only here" if mark == "+" else "only there" if mark == "−" else "text differs"}">{mark}{ident(name)} <small>{signed(delta)}</small></span>')
    return " ".join(items)


def _value_variants(idx: SiteIndex, page: str, axis: str, vs: list[Variant]) -> str:
    other_axes = [a for a, _ in idx.axes if a != axis]
    base = min((idx.totals[v] for v in vs), default=0)
    rows = []
    for v in vs:
        m = idx.measure[v]
        rows.append([
            *[ident(v.value(a)) for a in other_axes],
            Cell(link(idx.variant_href(page, v), num(m.total), title=v.id), "ps-r"),
            Cell(pct(m.percent_of_usable), "ps-r"),
            Cell(signed(m.total - base), "ps-r"),
        ])
    headers = [*[ident(a) for a in other_axes], Cell("tokens", "ps-r"), Cell("% usable", "ps-r"), Cell("vs smallest", "ps-r")]
    return table(headers, rows, cls="ps-nowrap", searchable=False)


def _value_sections(idx: SiteIndex, page: str, vs: list[Variant]) -> str:
    per: "OrderedDict[str, list[SectionUse]]" = OrderedDict()
    base_tokens = [idx.measure[v].base for v in vs]
    base_texts = {idx.request[v].base.text for v in vs}
    for v in vs:
        for u in idx.uses(v):
            per.setdefault(u.section.fragment, []).append(u)
    rows = [[
        "instructions",
        Cell(f"{len(vs)} / {len(vs)}", "ps-r"),
        Cell(spread(base_tokens), "ps-r"),
        Cell(str(len(base_texts)), "ps-r"),
    ]]
    for name, uses in per.items():
        objects = {id(u.section): u.section for u in uses}  # shared Section objects: join each text once
        rows.append([
            link(idx.href(page, idx.fragment_page(name)), f"<code>{ident(name)}</code>"),
            Cell(f"{len(uses)} / {len(vs)}", "ps-r"),
            Cell(spread([u.tokens for u in uses]), "ps-r"),
            Cell(str(len({s.text for s in objects.values()})), "ps-r"),
        ])
    return table(["part", Cell("in variants", "ps-r"), Cell("tokens", "ps-r"), Cell("distinct texts", "ps-r")], rows, cls="ps-nowrap", searchable=False)


def _compare(idx: SiteIndex, page: str, axis: str, value: str, other: str, vs: list[Variant]) -> list[str]:
    other_axes = [a for a, _ in idx.axes if a != axis]
    rows = []
    deltas = []
    counts: "OrderedDict[str, int]" = OrderedDict()
    for v in vs:
        w = idx.sibling(v, axis, other)
        if w is None:
            continue
        mv, mw = idx.measure[v], idx.measure[w]
        parts = _diff(idx, v, w)
        for name, _ in parts:
            counts[name] = counts.get(name, 0) + 1
        deltas.append(mv.total - mw.total)
        rows.append([
            *[ident(v.value(a)) for a in other_axes],
            Cell(link(idx.variant_href(page, v), num(mv.total)), "ps-r"),
            Cell(link(idx.variant_href(page, w), num(mw.total)), "ps-r"),
            Cell(signed(mv.total - mw.total), "ps-r"),
            Cell(_diff_html(parts, v, w, idx), "ps-text"),
        ])
    out = [f"### {md_inline(value)} vs {md_inline(other)}", ""]
    if not rows:
        out += [block(para("No pairs: every counterpart is excluded by the matrix rules."), cls="ps-intro"), ""]
        return out
    summary = ", ".join(f"<code>{h(n)}</code> ({c}/{len(rows)})" for n, c in counts.items()) or "none"
    out += [block(para(
        f"{len(rows)} pairs with the same {h(', '.join(other_axes))}; total tokens differ by "
        f"{signed(min(deltas))} to {signed(max(deltas))} (mean {signed(round(mean(deltas)))}). "
        f"Parts that differ: {summary}."
    ), cls="ps-intro"), ""]
    headers = [*[ident(a) for a in other_axes], Cell(h(value), "ps-r"), Cell(h(other), "ps-r"), Cell("Δ", "ps-r"), "parts that differ (Δ tokens)"]
    out += [table(headers, rows, cls="ps-compare ps-nowrap", searchable=False), ""]
    first = next((v for v in vs if idx.sibling(v, axis, other) is not None), None)
    if first is not None:
        out += _text_comparison(idx, page, first, idx.sibling(v=first, axis=axis, value=other))
    return out


def _text_comparison(idx: SiteIndex, page: str, a: Variant, b: Variant) -> list[str]:
    """The text that differs between one pair, section by section (review.pair, as `promptspec compare`)."""
    from ...review.pair import compare_variants
    from .changes import diff_html

    pair = compare_variants(idx.result, a.id, b.id)
    if not pair.differing:
        return [block(para(f"{link(idx.variant_href(page, a), f'<code>{h(a.id)}</code>')} and "
                           f"{link(idx.variant_href(page, b), f'<code>{h(b.id)}</code>')} send the same text."), cls="ps-intro"), ""]
    parts = []
    for p in pair.differing:
        summary = f"{h(p.label)}: {h(p.kind.replace('_', ' '))}, {num(p.tokens_a)} → {num(p.tokens_b)} tokens ({signed(p.delta)})"
        parts.append(f"<details class=\"ps-pair-part\"><summary>{summary}</summary>{diff_html(p.diff)}</details>")
    intro = (f"What {link(idx.variant_href(page, b), f'<code>{h(b.id)}</code>')} sends differently from "
             f"{link(idx.variant_href(page, a), f'<code>{h(a.id)}</code>')}, part by part "
             f"(the same as <code>promptspec compare {h(a.id)} {h(b.id)}</code>):")
    return [block(para(intro) + "".join(parts), cls="ps-pair"), ""]


def axis_value_page(idx: SiteIndex, axis: str, value: str) -> str:
    page = idx.axis_page(axis, value)
    vs = idx.with_value(axis, value)
    out = page_head(f"{value} · {axis}", f"{axis}: {value}")
    out.append(block(para(
        f"{link(idx.href(page, idx.axis_page(axis)), 'All ' + h(axis_title(axis).lower()))} · "
        f"{link(idx.href(page, idx.matrix_page), 'Matrix')}"
    ), cls="ps-crumbs"))
    out += ["", _value_facts(idx, axis, value), ""]
    out += [f"## Variants ({len(vs)})", ""]
    if not vs:
        out += [block(para("Every variant with this value is excluded by the matrix rules."), cls="ps-intro"), ""]
        return join_blocks(out)
    other_axes = [a for a, _ in idx.axes if a != axis]
    if len(vs) <= idx.list_limit:
        out += [_value_variants(idx, page, axis, vs), ""]
    else:
        out += [block(para(
            f"More than {idx.list_limit:,}, so not listed one by one: below, their total tokens by the value of "
            f"every other axis (min and max link to that variant). The {link(idx.explorer_href(page, vs[0]), 'Explorer')} "
            "shows any single variant."
        ), cls="ps-intro"), ""]
        out += site_summary.by_axis_tables(idx, page, vs, other_axes)
    out += ["## Parts across these variants", "", _value_sections(idx, page, vs), ""]
    if axis == "model":
        out += tool_pages.model_tools(idx, value, page)
    values = dict(idx.axes)[axis]
    others = site_summary.neighbours(idx, axis, value)
    if others:
        out += [f"## Compared with other {md_inline(axis_title(axis).lower())}", ""]
        if len(others) < len(values) - 1:
            out += [block(para(
                f"{len(values) - 1:,} other values: compared with the {len(others)} nearest in the axis order "
                f"(pages stay small however many values there are); the "
                f"{link(idx.explorer_href(page, vs[0]), 'Explorer')} shows any variant."
            ), cls="ps-intro"), ""]
        if len(vs) * len(others) <= idx.list_limit:
            out += [block(para(
                f"Each row pairs a variant with the one that differs only in {h(axis)}, side by side, "
                "and names the parts whose text differs (+ only here, − only there) with the token difference."
            ), cls="ps-intro"), ""]
            for other in others:
                out += _compare(idx, page, axis, value, other, vs)
        else:
            out += [block(para(
                f"Each variant is paired with the one that differs only in {h(axis)}. Per other value: how many pairs, "
                "how their totals differ, and each part whose text differs in some pair (+ only here, − only there) "
                "with the range of its token difference and the pair where it is largest."
            ), cls="ps-intro"), ""]
            for other in others:
                cmp = site_summary.comparison(idx, axis, value, other)
                out += [f"### {md_inline(value)} vs {md_inline(other)}", ""]
                out += site_summary.comparison_block(idx, page, cmp, lambda name: idx.href(page, idx.fragment_page(name)))
    return join_blocks(out)


