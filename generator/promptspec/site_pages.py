"""The overview pages: the matrix, one page per axis value (models,
personalities, modes, extra axes), the fragment catalog and the assembly
overview.  Each function returns one page's Markdown; tables are raw HTML so
spec strings cannot turn into Markdown syntax.

Small matrices get every variant listed and compared row by row; above the
site's list limit a page shows summaries instead (site_summary.py), so no
overview page grows with the number of variants.  Links to a variant go to
its page, or to the explorer where it has none (`SiteIndex.variant_href`).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from statistics import mean
from typing import Sequence

from . import mermaid, site_lint, site_summary
from .assemble import Variant
from .site_index import AXIS_TITLES, SiteIndex, SectionUse, spread
from .site_markup import Cell, block, front_matter, h, link, md_inline, num, pct, pre, quoted, signed, table

HEAT_BUCKETS = 6
PLACEHOLDER = h("{{ personality }}")


def _head(title: str, heading: str | None = None, *, extra: dict | None = None) -> list[str]:
    meta = {"title": title, **(extra or {})}
    return [front_matter(meta).rstrip("\n"), "", f"# {md_inline(heading or title)}", ""]


def _join(parts: Sequence[str]) -> str:
    return "\n".join(parts).rstrip("\n") + "\n"


def _p(html_: str) -> str:
    return f"<p>{html_}</p>"


def axis_title(axis: str) -> str:
    return AXIS_TITLES.get(axis, axis)


# ---------------------------------------------------------------------------
# Matrix


def _cell(idx: SiteIndex, page: str, v: Variant | None) -> Cell:
    if v is None:
        return Cell("—", "ps-cell ps-excluded", {"title": "excluded by the matrix rules"})
    m = idx.measure[v]
    heat = idx.heat(m.total, HEAT_BUCKETS)
    title = f"{v.id}: {m.total:,} tokens" + ("" if m.percent_of_usable is None else f", {m.percent_of_usable:.2f}% of the usable window")
    inner = link(idx.variant_href(page, v), f'<span class="ps-num">{num(m.total)}</span><span class="ps-pct">{pct(m.percent_of_usable)}</span>')
    return Cell(inner, f"ps-cell ps-heat-{heat}", {"title": title})


def _sum_cell(values: list[int], cls: str = "ps-sum") -> Cell:
    if not values:
        return Cell("—", f"ps-r {cls}")
    return Cell(f'<span class="ps-num">{num(sum(values))}</span><span class="ps-pct">{len(values)} variant{"s" if len(values) != 1 else ""}</span>', f"ps-r {cls}")


def _matrix_table(idx: SiteIndex, page: str, extra: tuple[tuple[str, str], ...]) -> str:
    spec = idx.spec
    modes = [m.name for m in spec.modes]
    headers: list[str | Cell] = [
        "model",
        "personality",
        *[link(idx.href(page, idx.axis_page("mode", mo)), h(mo)) for mo in modes],
        Cell("Σ", "ps-r"),
    ]
    rows: list[list[str | Cell]] = []
    grand: dict[str, list[int]] = {mo: [] for mo in modes}
    for model in spec.models:
        per_mode: dict[str, list[int]] = {mo: [] for mo in modes}
        pers = [p.name for p in spec.personalities]
        for k, personality in enumerate(pers):
            row: list[str | Cell] = []
            if k == 0:
                row.append(Cell(link(idx.href(page, idx.axis_page("model", model.slug)), f"<code>{h(model.slug)}</code>"), "ps-model", {"rowspan": str(len(pers) + 1)}, header=True))
            row.append(Cell(link(idx.href(page, idx.axis_page("personality", personality)), h(personality)), header=True))
            row_tokens = []
            for mo in modes:
                v = idx.variant((("model", model.slug), ("personality", personality), ("mode", mo), *extra))
                row.append(_cell(idx, page, v))
                if v is not None:
                    t = idx.totals[v]
                    row_tokens.append(t)
                    per_mode[mo].append(t)
                    grand[mo].append(t)
            row.append(_sum_cell(row_tokens))
            rows.append(row)
        rows.append([Cell(f"Σ {h(model.slug)}", "ps-subtotal", header=True), *[_sum_cell(per_mode[mo], "ps-subtotal") for mo in modes], _sum_cell([t for mo in modes for t in per_mode[mo]], "ps-subtotal")])
    rows.append([Cell("Σ all models", "ps-total", {"colspan": "2"}, header=True), *[_sum_cell(grand[mo], "ps-total") for mo in modes], _sum_cell([t for mo in modes for t in grand[mo]], "ps-total")])
    return table(headers, rows, cls="ps-matrix ps-nowrap")


def _totals(idx: SiteIndex, page: str) -> str:
    modes = [m.name for m in idx.spec.modes]
    rows = []
    col: dict[str, list[int]] = {mo: [] for mo in modes}
    cells: dict[tuple[str, str], list[int]] = {}
    for v in idx.variants:
        cells.setdefault((v.model, v.mode), []).append(idx.totals[v])
    for model in idx.spec.models:
        row: list[str | Cell] = [Cell(link(idx.href(page, idx.axis_page("model", model.slug)), f"<code>{h(model.slug)}</code>"), header=True)]
        all_t = []
        for mo in modes:
            ts = cells.get((model.slug, mo), [])
            col[mo].extend(ts)
            all_t.extend(ts)
            row.append(_sum_cell(ts))
        row.append(_sum_cell(all_t, "ps-subtotal"))
        rows.append(row)
    rows.append([Cell("Σ per mode", "ps-total", header=True), *[_sum_cell(col[mo], "ps-total") for mo in modes], _sum_cell([t for mo in modes for t in col[mo]], "ps-total")])
    headers = ["model", *[link(idx.href(page, idx.axis_page("mode", mo)), h(mo)) for mo in modes], Cell("Σ model", "ps-r")]
    return table(headers, rows, cls="ps-totals ps-nowrap")


def _heat_legend(idx: SiteIndex) -> str:
    lo, hi = idx.token_range
    cells = []
    for b in range(HEAT_BUCKETS):
        a = lo + (hi - lo + 1) * b // HEAT_BUCKETS
        z = lo + (hi - lo + 1) * (b + 1) // HEAT_BUCKETS - 1
        cells.append(f'<span class="ps-heat-{b} ps-key">{num(a)}–{num(max(a, z))}</span>')
    return block(["<span>shade by total tokens:</span>", *cells], cls="ps-heat-legend")


def _matrix_summary(idx: SiteIndex, page: str) -> list[str]:
    """Model × mode: variants, min–max tokens (linked to those variants), median."""
    modes = [m.name for m in idx.spec.modes]
    cells: dict[tuple[str, str], list[Variant]] = {}
    for v in idx.variants:
        cells.setdefault((v.model, v.mode), []).append(v)
    rows = []
    for model in idx.spec.models:
        row: list[str | Cell] = [Cell(link(idx.href(page, idx.axis_page("model", model.slug)), f"<code>{h(model.slug)}</code>"), header=True)]
        for mo in modes:
            vs = sorted(cells.get((model.slug, mo), []), key=idx.totals.__getitem__)
            if not vs:
                row.append(Cell("—", "ps-cell ps-excluded", {"title": "excluded by the matrix rules"}))
                continue
            lo, hi = vs[0], vs[-1]
            mid = idx.totals[vs[(len(vs) - 1) // 2]]
            inner = (
                f'<span class="ps-num">{site_summary.vlink(idx, page, lo, num(idx.totals[lo]))}–'
                f'{site_summary.vlink(idx, page, hi, num(idx.totals[hi]))}</span>'
                f'<span class="ps-pct">{len(vs):,} variants, median {num(mid)}</span>'
            )
            row.append(Cell(inner, f"ps-cell ps-heat-{idx.heat(mid, HEAT_BUCKETS)}", {"title": f"{model.slug}, {mo}: {len(vs):,} variants"}))
        rows.append(row)
    headers = ["model", *[link(idx.href(page, idx.axis_page("mode", mo)), h(mo)) for mo in modes]]
    return [table(headers, rows, cls="ps-matrix ps-nowrap ps-summary"), ""]


def matrix_page(idx: SiteIndex) -> str:
    page = idx.matrix_page
    spec = idx.spec
    full = len(idx.variants) <= idx.matrix_limit
    out = _head("Matrix", f"{spec.name}: every variant", extra={"hide": ["toc"]})
    axes_desc = " × ".join(f"{len(vals)} {a}" for a, vals in idx.axes)
    explore = link(idx.explorer_href(page), "Explorer")
    if full:
        intro = (
            "Each cell is the variant's total tokens — base instructions plus every section — "
            "and its share of the model's usable window (context window × effective percent). "
            "Click a cell for the assembled prompt."
        )
    else:
        intro = (
            f"Too many to show one cell each (more than {idx.matrix_limit:,}): each cell is a model and mode, "
            "with the smallest and largest variant's total tokens (linked to them) and the median over "
            f"every other axis. The {explore} shows any single variant; the pages of each "
            f"{link(idx.href(page, idx.axis_page('model')), 'model')}, "
            f"{link(idx.href(page, idx.axis_page('mode')), 'mode')} and other axis value summarise them by axis."
        )
    out.append(block(_p(f"{len(idx.variants)} variants ({h(axes_desc)}, after the matrix rules). " + intro), cls="ps-intro"))
    out.append("")
    out.append(_heat_legend(idx))
    out.append("")
    extra_axes = idx.axes[3:]
    if full:
        combos = list(itertools.product(*[[(a, x) for x in vals] for a, vals in extra_axes])) or [()]
        for combo in combos:
            if combo:
                label = ", ".join(f"{a} = {x}" for a, x in combo)
                out += [f"## {md_inline(label)}", ""]
            out += [_matrix_table(idx, page, tuple(combo)), ""]
    else:
        out += ["## Tokens per model and mode", ""]
        out += _matrix_summary(idx, page)
    out += ["## Totals per model and mode", ""]
    if extra_axes:
        out += [block(_p("Summed over every personality" + "".join(f" and {h(a)}" for a, _ in extra_axes) + "."), cls="ps-intro"), ""]
    out += [_totals(idx, page), ""]
    out += ["## More", ""]
    more = [explore] + [
        link(idx.href(page, idx.axis_page(a)), h(axis_title(a))) for a, _ in idx.axes
    ] + [
        link(idx.href(page, idx.fragment_page()), "Fragments"),
        link(idx.href(page, idx.assembly_page), "Assembly"),
        link(idx.href(page, idx.lint_page), "Lint"),
        link(idx.href(page, idx.changes_page), "Changes"),
    ]
    out += [block("<ul>" + "".join(f"<li>{x}</li>" for x in more) + "</ul>", cls="ps-more"), ""]
    return _join(out)


# ---------------------------------------------------------------------------
# Axis pages (models, personalities, modes, extra axes)


def axis_index_page(idx: SiteIndex, axis: str) -> str:
    page = idx.axis_page(axis)
    values = dict(idx.axes)[axis]
    out = _head(axis_title(axis))
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
    return _join(out)


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
        items.append(f'<span class="ps-diff" title="{"only here" if mark == "+" else "only there" if mark == "−" else "text differs"}">{mark}{h(name)} <small>{signed(delta)}</small></span>')
    return " ".join(items)


def _value_variants(idx: SiteIndex, page: str, axis: str, vs: list[Variant]) -> str:
    other_axes = [a for a, _ in idx.axes if a != axis]
    base = min((idx.totals[v] for v in vs), default=0)
    rows = []
    for v in vs:
        m = idx.measure[v]
        rows.append([
            *[h(v.value(a)) for a in other_axes],
            Cell(link(idx.variant_href(page, v), num(m.total), title=v.id), "ps-r"),
            Cell(pct(m.percent_of_usable), "ps-r"),
            Cell(signed(m.total - base), "ps-r"),
        ])
    headers = [*[h(a) for a in other_axes], Cell("tokens", "ps-r"), Cell("% usable", "ps-r"), Cell("vs smallest", "ps-r")]
    return table(headers, rows, cls="ps-nowrap")


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
            link(idx.href(page, idx.fragment_page(name)), f"<code>{h(name)}</code>"),
            Cell(f"{len(uses)} / {len(vs)}", "ps-r"),
            Cell(spread([u.tokens for u in uses]), "ps-r"),
            Cell(str(len({s.text for s in objects.values()})), "ps-r"),
        ])
    return table(["part", Cell("in variants", "ps-r"), Cell("tokens", "ps-r"), Cell("distinct texts", "ps-r")], rows, cls="ps-nowrap")


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
            *[h(v.value(a)) for a in other_axes],
            Cell(link(idx.variant_href(page, v), num(mv.total)), "ps-r"),
            Cell(link(idx.variant_href(page, w), num(mw.total)), "ps-r"),
            Cell(signed(mv.total - mw.total), "ps-r"),
            Cell(_diff_html(parts, v, w, idx), "ps-text"),
        ])
    out = [f"### {md_inline(value)} vs {md_inline(other)}", ""]
    if not rows:
        out += [block(_p("No pairs: every counterpart is excluded by the matrix rules."), cls="ps-intro"), ""]
        return out
    summary = ", ".join(f"<code>{h(n)}</code> ({c}/{len(rows)})" for n, c in counts.items()) or "none"
    out += [block(_p(
        f"{len(rows)} pairs with the same {h(', '.join(other_axes))}; total tokens differ by "
        f"{signed(min(deltas))} to {signed(max(deltas))} (mean {signed(round(mean(deltas)))}). "
        f"Parts that differ: {summary}."
    ), cls="ps-intro"), ""]
    headers = [*[h(a) for a in other_axes], Cell(h(value), "ps-r"), Cell(h(other), "ps-r"), Cell("Δ", "ps-r"), "parts that differ (Δ tokens)"]
    out += [table(headers, rows, cls="ps-compare ps-nowrap"), ""]
    return out


def axis_value_page(idx: SiteIndex, axis: str, value: str) -> str:
    page = idx.axis_page(axis, value)
    vs = idx.with_value(axis, value)
    out = _head(value, f"{axis}: {value}")
    out.append(block(_p(
        f"{link(idx.href(page, idx.axis_page(axis)), 'All ' + h(axis_title(axis).lower()))} · "
        f"{link(idx.href(page, idx.matrix_page), 'Matrix')}"
    ), cls="ps-crumbs"))
    out += ["", _value_facts(idx, axis, value), ""]
    out += [f"## Variants ({len(vs)})", ""]
    if not vs:
        out += [block(_p("Every variant with this value is excluded by the matrix rules."), cls="ps-intro"), ""]
        return _join(out)
    other_axes = [a for a, _ in idx.axes if a != axis]
    if len(vs) <= idx.list_limit:
        out += [_value_variants(idx, page, axis, vs), ""]
    else:
        out += [block(_p(
            f"More than {idx.list_limit:,}, so not listed one by one: below, their total tokens by the value of "
            f"every other axis (min and max link to that variant). The {link(idx.explorer_href(page, vs[0]), 'Explorer')} "
            "shows any single variant."
        ), cls="ps-intro"), ""]
        out += site_summary.by_axis_tables(idx, page, vs, other_axes)
    out += ["## Parts across these variants", "", _value_sections(idx, page, vs), ""]
    others = [x for x in dict(idx.axes)[axis] if x != value]
    if others:
        out += [f"## Compared with other {md_inline(axis_title(axis).lower())}", ""]
        if len(vs) * len(others) <= idx.list_limit:
            out += [block(_p(
                f"Each row pairs a variant with the one that differs only in {h(axis)}, side by side, "
                "and names the parts whose text differs (+ only here, − only there) with the token difference."
            ), cls="ps-intro"), ""]
            for other in others:
                out += _compare(idx, page, axis, value, other, vs)
        else:
            out += [block(_p(
                f"Each variant is paired with the one that differs only in {h(axis)}. Per other value: how many pairs, "
                "how their totals differ, and each part whose text differs in some pair (+ only here, − only there) "
                "with the range of its token difference and the pair where it is largest."
            ), cls="ps-intro"), ""]
            for other in others:
                cmp = site_summary.comparison(idx, axis, value, other)
                out += [f"### {md_inline(value)} vs {md_inline(other)}", ""]
                out += site_summary.comparison_block(idx, page, cmp, lambda name: idx.href(page, idx.fragment_page(name)))
    return _join(out)


# ---------------------------------------------------------------------------
# Fragments


def _conditions(f) -> str:
    parts = []
    for axis, pats in f.when.items():
        parts.append(f"{h(axis)} ∈ " + ", ".join(f"<code>{h(p)}</code>" for p in pats))
    if f.requires:
        parts.append("requires " + ", ".join(f"<code>{h(r)}</code>" for r in f.requires))
    return "; ".join(parts) or "always"


def fragments_index_page(idx: SiteIndex) -> str:
    page = idx.fragment_page()
    out = _head("Fragments", "Fragment catalog")
    out.append(block(_p(
        f"{len(idx.spec.fragments)} fragments. A fragment renders as start marker + body + end marker "
        "and fills one slot of the layout (see "
        f"{link(idx.href(page, idx.assembly_page), 'Assembly')})."
    ), cls="ps-intro"))
    out.append("")
    rows = []
    for f in sorted(idx.spec.fragments, key=lambda f: f.name):
        uses = idx.fragment_uses.get(f.name, [])
        rows.append([
            link(idx.href(page, idx.fragment_page(f.name)), f"<code>{h(f.name)}</code>"),
            h(f.role),
            f"<code>{h(f.slot)}</code>",
            h(f.owner) or "–",
            h(f.description),
            Cell(f"{len({u.variant for u in uses})} / {len(idx.variants)}", "ps-r"),
            Cell(spread([u.tokens for u in uses]), "ps-r"),
        ])
    out += [table(["name", "role", "slot", "owner", "description", Cell("variants", "ps-r"), Cell("tokens", "ps-r")], rows), ""]
    return _join(out)


def fragment_page(idx: SiteIndex, name: str) -> str:
    page = idx.fragment_page(name)
    f = next(x for x in idx.spec.fragments if x.name == name)
    uses = idx.fragment_uses.get(name, [])
    out = _head(name, f"Fragment {name}")
    out.append(block(_p(
        f"{link(idx.href(page, idx.fragment_page()), 'All fragments')} · {link(idx.href(page, idx.assembly_page), 'Assembly')}"
    ), cls="ps-crumbs"))
    out.append("")
    group = idx.spec.slot_message(f.slot)
    rows: list[list[str | Cell]] = [
        [Cell("description", header=True), h(f.description) or "–"],
        [Cell("owner", header=True), h(f.owner) or "–"],
        [Cell("role", header=True), h(f.role)],
        [Cell("slot", header=True), f"<code>{h(f.slot)}</code> in the {h(group.replace('_', ' '))} message" + (f", order {f.order}" if f.order else "")],
        [Cell("start marker", header=True), quoted(f.start) if f.start else "none"],
        [Cell("end marker", header=True), quoted(f.end) if f.end else "none"],
        [Cell("defined in", header=True), f"<code>{h(f.source)}</code>" + (f" line {f.line}" if f.line else "")],
        [Cell("template", header=True), f"<code>{h(f.template_ref)}</code> ({h(f.engine)})"],
        [Cell("applies", header=True), _conditions(f)],
        [Cell("included in", header=True), f"{len(uses)} of {len(idx.variants)} variants"],
        [Cell("tokens", header=True), spread([u.tokens for u in uses]) + (f" (Codex estimate {spread([u.estimate for u in uses])})" if uses else "")],
    ]
    out += [table([], rows, cls="ps-facts"), ""]
    out += site_lint.fragment_section(idx, name)
    # Distinct renderings, in order of first appearance.  Sections are
    # shared objects: group by object first, so each text is joined once.
    by_object: "OrderedDict[int, list[SectionUse]]" = OrderedDict()
    for u in uses:
        by_object.setdefault(id(u.section), []).append(u)
    groups: "OrderedDict[str, list[SectionUse]]" = OrderedDict()
    for us_ in by_object.values():
        groups.setdefault(us_[0].section.text, []).extend(us_)
    if len(by_object) > len(groups):  # a rendering made of several objects: back to matrix order
        rank = idx.memo.get("rank") or idx.memo.setdefault("rank", {v: i for i, v in enumerate(idx.variants)})
        for us_ in groups.values():
            us_.sort(key=lambda u: rank[u.variant])
    out += [f"## Renderings ({len(groups)})", ""]
    if not groups:
        out += [block(_p("No variant includes this fragment (its conditions or an empty body leave it out everywhere)."), cls="ps-intro"), ""]
    listed = len(uses) <= idx.list_limit
    if groups and not listed:
        out += [block(_p(
            f"In {len(uses):,} variants, more than {idx.list_limit:,}, so each rendering says which variants use it by their "
            f"axis values and links one of them; the {link(idx.explorer_href(page), 'Explorer')} shows any single variant."
        ), cls="ps-intro"), ""]
    within = site_summary.value_counts(idx, [u.variant for u in uses]) if not listed else {}
    for k, (text, us) in enumerate(groups.items(), 1):
        if listed:
            variants = " ".join(link(idx.variant_href(page, u.variant), h(u.variant.id)) for u in us)
        else:
            variants = (
                f"{site_summary.describe_group(idx, [u.variant for u in us], within)} — "
                f"for example {site_summary.vlink(idx, page, us[0].variant)}"
            )
        summary = f"<strong>rendering {k}</strong> <span class=\"ps-tok\">{spread([u.tokens for u in us])} tokens</span> <span class=\"ps-dim\">in {len(us)} variant{'s' if len(us) != 1 else ''}</span>"
        body = "\n".join([
            f'<details class="ps-section ps-role-{h(f.role)}">',
            f"<summary>{summary}</summary>",
            f'<p class="ps-variants">{variants}</p>',
            pre(text, attrs={"data-ps-rendering": str(k)}),
            "</details>",
        ])
        out += [block(body, cls="ps-prompt-part"), ""]
    return _join(out)


# ---------------------------------------------------------------------------
# Assembly overview


def assembly_page(idx: SiteIndex) -> str:
    page = idx.assembly_page
    spec = idx.spec
    by_slot: dict[str, list[str]] = {}
    for f in sorted(spec.fragments, key=lambda f: (f.order, f.name)):
        by_slot.setdefault(f.slot, []).append(f.name)
    out = _head("Assembly", "How a request is assembled")
    out.append(block(_p(
        "A request is the base instructions followed by messages. Every slot of the developer message "
        "contributes its fragments' sections to one developer message; each section in a separate-developer "
        "slot becomes its own developer message; the user slots make one user message. Within a slot, "
        "fragments go by <code>order</code>, then name. A fragment that does not apply to a variant, or "
        "renders empty, is left out."
    ), cls="ps-intro"))
    out += ["", mermaid.fence(mermaid.assembly(spec, by_slot)), ""]
    out += ["## Base instructions", ""]
    out.append(block(_p(
        "An <code>instructions_override</code> wins; else a model's <code>instructions_template</code> with "
        f"<code>{PLACEHOLDER}</code> replaced by the personality's variable; else the model's "
        "<code>base_instructions</code>."
    ), cls="ps-intro"))
    out.append("")
    rows = []
    for model in spec.models:
        rules = []
        for p in spec.personalities:
            v = next((v for v in idx.variants if v.model == model.slug and v.personality == p.name), None)
            if v is None:
                continue
            b = idx.request[v].base
            rules.append(f"{h(p.name)}: <code>{h(b.rule)}</code>" + (f" <code>{h(b.detail)}</code>" if b.detail else ""))
        rows.append([link(idx.href(page, idx.axis_page("model", model.slug)), f"<code>{h(model.slug)}</code>"), "<br>".join(rules) or "–"])
    out += [table(["model", "rule per personality"], rows), ""]
    for group, slots in spec.layout.items():
        out += [f"## {md_inline(group.replace('_', ' '))} slots", ""]
        rows = []
        for slot in slots:
            names = by_slot.get(slot, [])
            frs = [next(f for f in spec.fragments if f.name == n) for n in names]
            cell = "<br>".join(
                f"{link(idx.href(page, idx.fragment_page(f.name)), f'<code>{h(f.name)}</code>')} <span class=\"ps-dim\">({_conditions(f)})</span>"
                for f in frs
            ) or '<span class="ps-dim">no fragment</span>'
            rows.append([f"<code>{h(slot)}</code>", cell])
        out += [table(["slot", "fragments"], rows), ""]
    return _join(out)
