"""The matrix page: every variant's total tokens and % of the usable window,
shaded by size, with the smallest and largest per model and per mode (never
sums: variants are never sent together, so their tokens do not add up).  Tables are raw HTML so spec
strings cannot turn into Markdown syntax; above the site's list limit the page
shows summaries instead (summary.py).
"""

from __future__ import annotations

import itertools

from ...assemble.request import Variant
from ...review.budgets import measure_breaches
from . import summary as site_summary
from ..index import SiteIndex, spread
from ..html.markup import (
    Cell,
    block,
    h,
    ident,
    link,
    md_inline,
    num,
    pct,
    table,
)
from ..html.page_parts import HEAT_BUCKETS, axis_title, join_blocks, page_head, para

# ---------------------------------------------------------------------------
# Matrix


def _cell(idx: SiteIndex, page: str, v: Variant | None) -> Cell:
    if v is None:
        return Cell("—", "ps-cell ps-excluded", {"title": "excluded by the matrix rules"})
    m = idx.measure[v]
    heat = idx.heat(m.total, HEAT_BUCKETS)
    title = f"{v.id}: {m.total:,} tokens" + ("" if m.percent_of_usable is None else f", {m.percent_of_usable:.2f}% of the usable window")
    over = measure_breaches(idx.spec, m) if idx.spec.budgets else []
    mark = ""
    cls = f"ps-cell ps-heat-{heat}"
    if over:
        title += "; over budget: " + "; ".join(b.message() for b in over)
        mark = '<span class="ps-over-budget-mark" aria-label="over budget">⚠ over budget</span>'
        cls += " ps-over-budget"
    inner = link(idx.variant_href(page, v), f'<span class="ps-num">{num(m.total)}</span><span class="ps-pct">{pct(m.percent_of_usable)}</span>{mark}')
    return Cell(inner, cls, {"title": title})


def _sum_cell(values: list[int], cls: str = "ps-sum") -> Cell:
    """The smallest and largest total of a row or column, and how many variants."""
    if not values:
        return Cell("—", f"ps-r {cls}")
    return Cell(f'<span class="ps-num">{spread(values)}</span><span class="ps-pct">{len(values)} variant{"s" if len(values) != 1 else ""}</span>', f"ps-r {cls}")


def _matrix_table(idx: SiteIndex, page: str, extra: tuple[tuple[str, str], ...]) -> str:
    spec = idx.spec
    modes = [m.name for m in spec.modes]
    headers: list[str | Cell] = [
        "model",
        "personality",
        *[link(idx.href(page, idx.axis_page("mode", mo)), h(mo)) for mo in modes],
        Cell("min–max", "ps-r"),
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
        rows.append([Cell(f"{ident(model.slug)}: all", "ps-subtotal", header=True), *[_sum_cell(per_mode[mo], "ps-subtotal") for mo in modes], _sum_cell([t for mo in modes for t in per_mode[mo]], "ps-subtotal")])
    rows.append([Cell("all models", "ps-total", {"colspan": "2"}, header=True), *[_sum_cell(grand[mo], "ps-total") for mo in modes], _sum_cell([t for mo in modes for t in grand[mo]], "ps-total")])
    return table(headers, rows, cls="ps-matrix ps-nowrap", searchable=False)


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
    rows.append([Cell("all models", "ps-total", header=True), *[_sum_cell(col[mo], "ps-total") for mo in modes], _sum_cell([t for mo in modes for t in col[mo]], "ps-total")])
    headers = ["model", *[link(idx.href(page, idx.axis_page("mode", mo)), h(mo)) for mo in modes], Cell("all modes", "ps-r")]
    return table(headers, rows, cls="ps-totals ps-nowrap", searchable=False)


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
    return [table(headers, rows, cls="ps-matrix ps-nowrap ps-summary", searchable=False), ""]


def matrix_page(idx: SiteIndex) -> str:
    page = idx.matrix_page
    spec = idx.spec
    full = len(idx.variants) <= idx.matrix_limit
    out = page_head("Matrix", f"{spec.name}: every variant", extra={"hide": ["toc"]})
    axes_desc = " × ".join(f"{len(vals)} {a}" for a, vals in idx.axes)
    explore = link(idx.explorer_href(page), "Explorer")
    if full:
        intro = (
            "Each cell is the variant's total tokens — base instructions plus every section"
            + (" plus its tool definitions" if idx.spec.tools else "") + " — "
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
    if idx.spec.tools:
        intro += (" Tool tokens are an offline count of the tool JSON as serialised in the request; "
                  "the API's own accounting of tool definitions is not public.")
    out.append(block(para(f"{len(idx.variants)} variants ({h(axes_desc)}, after the matrix rules). " + intro), cls="ps-intro"))
    out.append("")
    out.append(_heat_legend(idx))
    out.append("")
    if spec.budgets and full:
        over = sum(1 for v in idx.variants if measure_breaches(spec, idx.measure[v]))
        out += [block(para(f"Budgets (<code>budgets:</code> in spec.yaml): {over} of {len(idx.variants)} variants are over one; "
                           "their cells are marked ⚠ over budget (hover for the figure and the budget)."), cls="ps-intro"), ""]
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
    out += ["## Smallest and largest per model and mode", ""]
    over = "every personality" + "".join(f" and {h(a)}" for a, _ in extra_axes)
    out += [block(para(f"The smallest and largest total tokens over {over}, and how many variants."), cls="ps-intro"), ""]
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
    return join_blocks(out)


