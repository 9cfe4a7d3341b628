"""The History section of the site: a timeline page and one page per step.

The timeline draws the tokens of a few chosen variants across the releases as
an inline SVG (no script, no CDN): axes and labels in `currentColor`, so they
follow the page's colour scheme, lines in mid-tone colours that read on a
light and on a dark background, and the min–max band of every variant behind
them; the same figures are in a table below, for reading and for screen
readers.  Each step page holds the grouped changes with their text diffs
and the token Δ, and links a variant to its page on this site when the page
shows exactly that release's request (same request hash).

Pure: a review.history.History and the SiteIndex in, {path: Markdown} out.
"""

from __future__ import annotations

import posixpath
from typing import Any, Sequence

from ...review.change import ChangeGroup
from ...review.history.compare import History, Step
from ...review.history.report import axis_lines, change_title, release_stats
from ...review.lockfile import request_hash
from .changes import diff_html
from ..index import SiteIndex
from ..html.markup import Cell, block, code, h, link, num, signed, table
from ..html.page_parts import join_blocks, page_head, para

FOLDER = "history"
MAX_LINES = 6
PALETTE = ("#3b82f6", "#d97706", "#059669", "#e11d48", "#a855f7", "#db2777")
"""Mid-tone colours: contrast of at least 3:1 (WCAG, graphics) on white and on Material's slate background (#1e2129)."""
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 720, 300, 64, 44, 16, 48


def timeline_page_path(idx: SiteIndex) -> str:
    return posixpath.join(idx.prefix, FOLDER, "index.md")


def step_page_path(idx: SiteIndex, step: Step) -> str:
    return posixpath.join(idx.prefix, FOLDER, f"step-{step.index}.md")


def pages(idx: SiteIndex, history: History, *, chart_variants: Sequence[str] = ()) -> dict[str, str]:
    """Every page of the section, by site path."""
    linker = _Linker(idx)
    out = {timeline_page_path(idx): timeline_page(idx, history, chart_variants)}
    for step in history.steps:
        out[step_page_path(idx, step)] = step_page(idx, history, step, linker)
    return out


# ---------------------------------------------------------------------------
# Which variants the chart follows


def traces(history: History, chosen: Sequence[str] = ()) -> list[tuple[str, list[int | None]]]:
    """(variant id in the last release, its total in every release or None), for up to MAX_LINES variants.

    A variant is followed backwards through each step's matching (an id may
    change when an axis appears).  Default: the variants that exist in the
    most releases, one per model (the first in matrix order) -- following
    the last release's models drew dots at its right edge when its models
    were new."""
    if not history.releases:
        return []
    last = history.releases[-1]
    back = [{hid: bid for bid, hid in step.diff.matched} for step in history.steps]

    def trace(vid: str) -> list[int | None]:
        totals: list[int | None] = [None] * len(history.releases)
        cur: str | None = vid
        for i in range(len(history.releases) - 1, -1, -1):
            if cur is None:
                break
            snap = history.releases[i].variants.get(cur)
            totals[i] = snap.total if snap else None
            cur = back[i - 1].get(cur) if i > 0 else None
        return totals

    ids = [v for v in chosen if v in last.variants][:MAX_LINES]
    if ids:
        return [(vid, trace(vid)) for vid in ids]
    every = [(vid, trace(vid)) for vid in last.variants]
    longest = max((sum(t is not None for t in ts) for _, ts in every), default=0)
    out: list[tuple[str, list[int | None]]] = []
    seen: set[str] = set()
    for vid, totals in every:
        model = last.variants[vid].model
        if model not in seen and sum(t is not None for t in totals) == longest:
            seen.add(model)
            out.append((vid, totals))
    return out[:MAX_LINES]


# ---------------------------------------------------------------------------
# The chart


def chart_svg(history: History, lines: list[tuple[str, list[int | None]]]) -> str:
    n = len(history.releases)
    stats = [release_stats(r) for r in history.releases]
    values = [x for s in stats if s for x in (s[0], s[2])] + [t for _, ts in lines for t in ts if t is not None]
    hi = max(values, default=1)
    lo = min(values, default=0)
    lo = max(0, lo - (hi - lo) * 0.1)
    top = hi + (hi - lo) * 0.05 or 1
    span = (top - lo) or 1
    pw, ph = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def x(i: int) -> float:
        return PAD_L + (pw * i / (n - 1) if n > 1 else pw / 2)

    def y(v: float) -> float:
        return PAD_T + ph - ph * (v - lo) / span

    out = [f'<svg class="ps-history-chart" viewBox="0 0 {W} {H}" width="100%" role="img" '
           f'aria-labelledby="ps-history-title" xmlns="http://www.w3.org/2000/svg">',
           '<title id="ps-history-title">Tokens per release of the followed variants, with the range of all variants</title>']
    for k in range(5):
        v = lo + span * k / 4
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="currentColor" stroke-opacity="0.15"/>')
        out.append(f'<text x="{PAD_L - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11" fill="currentColor">{int(round(v)):,}</text>')
    band = [(x(i), y(s[2])) for i, s in enumerate(stats) if s] + [(x(i), y(s[0])) for i, s in reversed(list(enumerate(stats))) if s]
    if band:
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in band)
        out.append(f'<polygon class="ps-history-band" points="{pts}" fill="currentColor" fill-opacity="0.10"><title>min–max of all variants</title></polygon>')
    for i, r in enumerate(history.releases):
        out.append(f'<text x="{x(i):.1f}" y="{H - PAD_B + 18}" text-anchor="middle" font-size="11" fill="currentColor">{h(_short(r.label))}</text>')
        if r.date:
            out.append(f'<text x="{x(i):.1f}" y="{H - PAD_B + 32}" text-anchor="middle" font-size="10" fill="currentColor" fill-opacity="0.7">{h(r.date[:10])}</text>')
    out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{PAD_T + ph}" y2="{PAD_T + ph}" stroke="currentColor" stroke-opacity="0.6"/>')
    for k, (vid, totals) in enumerate(lines):
        colour = PALETTE[k % len(PALETTE)]
        segment: list[str] = []
        segments: list[list[str]] = []
        for i, t in enumerate(totals):
            if t is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            segment.append(f"{x(i):.1f},{y(t):.1f}")
        if segment:
            segments.append(segment)
        for seg in segments:
            out.append(f'<polyline points="{" ".join(seg)}" fill="none" stroke="{colour}" stroke-width="2.5"/>')
        for i, t in enumerate(totals):
            if t is not None:
                out.append(f'<circle cx="{x(i):.1f}" cy="{y(t):.1f}" r="3.5" fill="{colour}"><title>{h(vid)} · '
                           f'{h(history.releases[i].label)}: {t:,} tokens</title></circle>')
    out.append("</svg>")
    key = "display:inline-block;width:1.6em;height:0.5em;margin-right:0.5em;vertical-align:middle;"
    legend = "".join(f'<li><span class="ps-history-key" style="{key}background:{PALETTE[k % len(PALETTE)]}"></span>{code(vid)}</li>'
                     for k, (vid, _) in enumerate(lines))
    legend += (f'<li><span class="ps-history-key ps-history-key-band" style="{key}background:currentColor;opacity:0.2"></span>'
               "min–max of all variants</li>")
    return "\n".join(out) + f'\n<ul class="ps-history-legend" style="list-style:none">{legend}</ul>'


def _short(label: str, limit: int = 16) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


# ---------------------------------------------------------------------------
# Pages


def timeline_page(idx: SiteIndex, history: History, chart_variants: Sequence[str] = ()) -> str:
    page = timeline_page_path(idx)
    out = page_head("History", "Prompt history")
    n = len(history.releases)
    intro = (f"What each of {n} releases did to the assembled request of every variant: the tokens of a few variants "
             "across releases, then one page per step with the changes grouped and their text diffs.")
    out += [block(para(h(intro)), cls="ps-intro"), ""]
    lines = traces(history, chart_variants)
    out += [block(chart_svg(history, lines), cls="ps-history-timeline"), ""]
    head = ["release", "date", Cell("variants", "ps-r"), Cell("tokens min", "ps-r"), Cell("median", "ps-r"), Cell("max", "ps-r")]
    rows = []
    for r in history.releases:
        s = release_stats(r)
        row: list[Any] = [h(r.label) + (' <small class="ps-dim">(lock: counts only)</small>' if r.kind == "lock" else ""), h(r.date or "–"),
                          Cell(num(len(r.variants)), "ps-r")]
        row += [Cell(_n(v), "ps-r") for v in (s or (None, None, None))]
        rows.append(row)
    out += ["## Releases", "", table(head, rows, cls="ps-nowrap ps-history-releases", searchable=False), ""]
    if lines:
        vhead = ["variant", *(Cell(h(r.label), "ps-r") for r in history.releases)]
        vrows = [[code(vid), *(Cell(num(t), "ps-r") for t in ts)] for vid, ts in lines]
        out += ["## Followed variants", "", block(para("Tokens per release of the variants the chart draws; – where the variant did not exist."),
                                                  cls="ps-intro"), "",
                table(vhead, vrows, cls="ps-nowrap ps-history-followed", searchable=False), ""]
    srows = []
    for step in history.steps:
        stats = step.delta_stats()
        target = step_page_path(idx, step)
        spread = " / ".join(_signed(x) for x in stats) if stats else "–"
        srows.append([link(idx.href(page, target), h(step.title)), Cell(num(len(step.changes)), "ps-r"),
                      Cell(num(len(step.diff.changed)), "ps-r"), Cell(f"+{len(step.added):,} / −{len(step.removed):,}", "ps-r"),
                      Cell(spread, "ps-r")])
    out += ["## Steps", "", table(["step", Cell("changes", "ps-r"), Cell("changed variants", "ps-r"), Cell("variants added / removed", "ps-r"),
                                   Cell("Δ tokens min / median / max", "ps-r")], srows, cls="ps-history-steps", searchable=False), ""]
    return join_blocks(out)


def _n(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.1f}" if isinstance(v, float) and not v.is_integer() else f"{int(v):,}"


def _signed(v: float) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:+.1f}"
    return signed(int(v))


class _Linker:
    """Links a release's variant to its page on this site when that page shows the same request."""

    def __init__(self, idx: SiteIndex):
        self.idx = idx
        self.by_id = {v.id: v for v in idx.variants}
        self._sha: dict[str, str] = {}

    def sha(self, vid: str) -> str | None:
        v = self.by_id.get(vid)
        if v is None:
            return None
        found = self._sha.get(vid)
        if found is None:
            found = self._sha[vid] = request_hash(self.idx.request[v])
        return found

    def link(self, page: str, release: Any, vid: str) -> str:
        snap = release.variants.get(vid)
        if snap is not None and snap.sha and self.sha(vid) == snap.sha:
            return link(self.idx.variant_href(page, self.by_id[vid]), code(vid))
        return code(vid)


def step_page(idx: SiteIndex, history: History, step: Step, linker: _Linker) -> str:
    page = step_page_path(idx, step)
    out = page_head(f"History: {step.title}", f"{step.title}")
    stats = step.delta_stats()
    facts = (f"Step {step.index} of {len(history.steps)}. {len(step.diff.matched):,} variants matched by their axis values "
             f"({len(step.diff.changed):,} changed, {len(step.diff.unchanged):,} unchanged), {len(step.added):,} added, "
             f"{len(step.removed):,} removed.")
    if stats:
        facts += f" Tokens Δ per variant: min {_signed(stats[0])}, median {_signed(stats[1])}, max {_signed(stats[2])}."
    nav = [link(idx.href(page, timeline_page_path(idx)), "Timeline")]
    if step.index > 1:
        nav.append(link(idx.href(page, step_page_path(idx, history.steps[step.index - 2])), "← previous step"))
    if step.index < len(history.steps):
        nav.append(link(idx.href(page, step_page_path(idx, history.steps[step.index])), "next step →"))
    out += [block([para(h(facts)), para(" · ".join(nav))], cls="ps-intro"), ""]
    if not step.head.has_text or not step.base.has_text:
        out += [block(para("One side is a lock file: it holds hashes and token counts, so changes show without text diffs."), cls="ps-dim"), ""]
    lines = axis_lines(step)
    if lines or step.added or step.removed:
        items = [f"<li>{h(line)}</li>" for line in lines]
        if step.added:
            items.append(f"<li>added variants: {h(step.added_reach.text())}</li>")
        if step.removed:
            items.append(f"<li>removed variants: {h(step.removed_reach.text())}</li>")
        out += ["## Axis values and variants", "", block(f"<ul>{''.join(items)}</ul>", cls="ps-history-axes"), ""]
    if step.changes:
        rows = [[link(f"#change-{c.id}", h(c.id)), h(change_title(c)), h(step.reach(c).text()), Cell(num(len(c.variants)), "ps-r"),
                 Cell(_range(*c.delta_range), "ps-r")] for c in step.changes]
        out += [f"## Changes ({len(step.changes)})", "",
                table(["#", "change", "reaches", Cell("variants", "ps-r"), Cell("Δ tokens", "ps-r")], rows), ""]
    top = step.largest_increases(10)
    if top:
        rows = [[linker.link(page, step.head, d.id), Cell(num(d.total_before), "ps-r"), Cell(num(d.total_after), "ps-r"),
                 Cell(signed(d.delta), "ps-r")]
                for d in top]
        out += ["## Largest token increases", "", table(["variant", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r")], rows,
                                                        cls="ps-nowrap", searchable=False), ""]
    if step.over_budget:
        items = "".join(f"<li>{code(o.fragment)}: up to {num(o.max_tokens)} tokens (budget {num(o.budget)}) in {num(o.variants)} variants"
                        f"{' — new' if o.new else ''}</li>" for o in step.over_budget)
        out += ["## Sections over the fragment budget", "", block(f"<ul>{items}</ul>", cls="ps-alerts admonition warning"), ""]
    crossings = step.headroom_crossings()
    if crossings:
        items = "".join(f"<li>{linker.link(page, step.head, vid)}: headroom {num(before)} → {num(after)}</li>"
                        for vid, before, after in crossings[: idx.list_limit])
        out += ["## Now past auto-compaction", "", block(f"<ul>{items}</ul>", cls="ps-alerts admonition warning"), ""]
    for c in step.changes:
        out += _change_block(idx, page, step, c, linker)
    return join_blocks(out)


def _range(lo: int, hi: int) -> str:
    return signed(lo) if lo == hi else f"{signed(lo)} … {signed(hi)}"


def _change_block(idx: SiteIndex, page: str, step: Step, c: ChangeGroup, linker: _Linker) -> list[str]:
    out = [f"### {h(c.id)} · {h(change_title(c))}", ""]
    release = step.base if c.kind == "removed" else step.head
    facts = f"Reaches {h(step.reach(c).text())}."
    if c.how in ("base instructions", "same text", "same marker", "similar text"):
        facts += f" The part was matched by {h(c.how)}{' under a new name' if c.name_before != c.name_after else ''}."
    elif c.how == "order":
        facts += " Same message, new position among its neighbours."
    listed = c.variants[: idx.list_limit]
    variants = " ".join(linker.link(page, release, vid) for vid in listed)
    if len(listed) < len(c.variants):
        variants += f" … and {len(c.variants) - len(listed):,} more"
    inner = [para(facts), f'<details class="ps-change-variants"><summary>variants ({len(c.variants)})</summary>',
             f'<p class="ps-variants">{variants}</p>', "</details>"]
    lock_side = (c.kind != "added" and c.before_text is None) or (c.kind != "removed" and c.after_text is None)
    if c.diff:
        inner.append(diff_html(c.diff))
    elif lock_side:
        inner.append('<p class="ps-dim">No text diff: a lock-file side has hashes and token counts only.</p>')
    out += [block(inner, cls="ps-change", attrs={"id": f"change-{c.id}"}), ""]
    return out


# ---------------------------------------------------------------------------
# The plugin option


def parse_option(value: Any) -> list:
    """The plugin option `history:`: a list, in release order, of sides
    (strings as on the command line) or mappings {side, label, date}."""
    from ...errors import UsageError
    from ...review.sides import parse_side

    if not isinstance(value, list) or len(value) < 2:
        raise UsageError("option 'history' must be a list of at least two releases (git revisions, dir:PATH or lock:PATH)")
    out = []
    for i, entry in enumerate(value, 1):
        if isinstance(entry, str):
            out.append(parse_side(entry))
        elif isinstance(entry, dict):
            unknown = sorted(set(entry) - {"side", "label", "date"})
            if unknown or not isinstance(entry.get("side"), str):
                raise UsageError(f"option 'history', entry {i}: expected keys side (required), label, date; found {sorted(entry)}")
            label, date = entry.get("label"), entry.get("date")
            out.append(parse_side(entry["side"], label=None if label is None else str(label), date=None if date is None else str(date)))
        else:
            raise UsageError(f"option 'history', entry {i}: a side string or a mapping with side/label/date")
    names = [s.name for s in out]
    if len(set(names)) != len(names):
        raise UsageError("option 'history': two releases have the same label; give each a label")
    return out


__all__ = ["chart_svg", "parse_option", "pages", "step_page_path", "timeline_page_path", "traces"]
