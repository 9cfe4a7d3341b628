"""The page of one variant: facts, token bar, send order, the full prompt.

The prompt is shown exactly as sent: base instructions, then every message
and section in order, each section in a collapsible `<details>` with its role,
markers, tokens, Codex's estimate and source file.  All of it is raw HTML; the
prompt text itself is marked `data-search-exclude` (see markup.pre), so
it stays out of the search index while titles, headings and markers stay
searchable.

`static_parts` is everything but the "changed since base" badge and section:
it depends only on the variant's Request and Measure and the site's layout,
so `mkdocs serve` keeps it between rebuilds (site.PageCache) and redoes
only the pages of variants an edit changed.
"""

from __future__ import annotations

import json
import zlib

from ...assemble.export import section_label
from ...assemble.request import Variant
from . import changes as site_changes
from ..html import diagram
from ..html import mermaid
from . import tool_pages
from ..index import SectionUse, SiteIndex
from .summary import MAX_COMPARED, window
from ..html.markup import (
    Cell,
    block,
    front_matter,
    h,
    link,
    md_inline,
    num,
    pct,
    pre,
    quoted,
    table,
)


def section_id(message: int, index: int) -> str:
    return f"s-{message}-{index}"


def _facts(idx: SiteIndex, v: Variant, page: str) -> str:
    m = idx.measure[v]
    req = idx.request[v]
    rows: list[list[str | Cell]] = []
    for axis, value in v.values:
        target = idx.axis_page(axis, value)
        shown = idx.display(axis, value)
        extra = f" <span class=\"ps-dim\">{h(shown)}</span>" if shown != value else ""
        rows.append([Cell(h(axis), header=True), link(idx.href(page, target), f"<code>{h(value)}</code>") + extra])
    base = req.base
    rule = f"<code>{h(base.rule)}</code>" + (f" — <code>{h(base.detail)}</code>" if base.detail else "")
    rows.append([Cell("base instructions", header=True), f"{rule} <span class=\"ps-dim\">from {h(base.source)}</span>"])
    rows.append([Cell("encoding", header=True), f"<code>{h(m.encoding)}</code>"])
    total = f"<strong>{num(m.total)}</strong> (Codex estimate {num(m.estimate)})"
    if req.tools:
        total += f" — instructions, messages and {num(m.tools)} tokens of tools (offline count of their serialised JSON)"
    rows.append([Cell("total tokens", header=True), total])
    usable = "–" if m.usable_window is None else f"{pct(m.percent_of_usable)} of {num(m.usable_window)} usable"
    rows.append([Cell("context window", header=True), usable])
    if m.compact_limit is not None:
        rows.append([
            Cell("auto-compact", header=True),
            f"at {num(m.compact_limit)} ({h(m.compact_limit_source)}); headroom {num(m.headroom)} "
            f"<span class=\"ps-dim\">by Codex's ⌈bytes/4⌉ estimate ({num(m.estimate)}), the figure Codex compares with the limit</span>",
        ])
    rows.append([
        Cell("download", header=True),
        link(idx.href(page, idx.variant_json(v)), "Responses API request (JSON)", download=True, cls="ps-download"),
    ])
    return table([], rows, cls="ps-facts")


def _bar(idx: SiteIndex, v: Variant) -> str:
    """One segment per part, widths in % of the total: readable without JS.
    The send-order diagram below it is the list of parts (one list, not two)."""
    m = idx.measure[v]
    total = m.total or 1
    segs = []
    parts = [("instructions", "base", m.base, "s-base")]
    for u in idx.uses(v):
        parts.append((f"[{u.index:02}] {u.section.fragment}", u.section.role, u.tokens, section_id(u.message, u.index)))
    req = idx.request[v]
    if req.tools:  # one segment for the tool list, counted over its serialised JSON
        parts.append((f"tools ({len(req.tools)})", "tools", m.tools, "s-tools"))
    made = idx.memo.setdefault("bar-parts", {})  # the same parts recur on many pages: their fixed HTML once each
    for k, (name, role, tokens, anchor) in enumerate(parts):
        width = 100.0 * tokens / total
        title = f"{name}: {tokens:,} tokens ({pct(width)})"
        key = (name, role, anchor, k % 2)
        fixed = made.get(key)
        if fixed is None:
            fixed = made[key] = (
                f'<a class="ps-seg ps-role-{h(role)} ps-alt-{k % 2}" style="width:',
                f'%" href="#{anchor}" title="',
                f'"><span>{h(name)}</span></a>',
            )
        segs.append(f"{fixed[0]}{width:.3f}{fixed[1]}{h(title)}{fixed[2]}")
    return block(segs, cls="ps-bar", attrs={"role": "img", "aria-label": f"{m.total:,} tokens by section"})


def _order(idx: SiteIndex, v: Variant) -> str:
    """The send order: a promptspec-drawn diagram (default) or Mermaid text."""
    req, m = idx.request[v], idx.measure[v]
    if idx.diagrams == "mermaid":
        return mermaid.fence(mermaid.ordering(req, m))
    tools = None
    if req.tools:
        tools = (tuple(t.tool_name for t in req.tools), req.tool_placement, m.tools)
    return diagram.ordering(idx.uses(v), req.base, m.base, m.total, [msg.role for msg in req.messages], tools=tools)


def place_line(idx: SiteIndex, v: Variant) -> str:
    """The page's line about where the variant ranks.  Its rank and the gaps
    to the smallest and largest variant depend on every other variant, so
    the page holds only its own total and the script (assets/promptspec.js,
    placement) fills in the rest from the totals file (idx.totals_file): an
    edit that changes some variants' tokens changes their pages and that one
    file, not every page (which under `mkdocs serve` would make each such
    edit rewrite them all).  Without the script, or opened from disk, the
    line says the matrix size."""
    src = idx.variant_page(v)
    return (f'<p class="ps-place" data-total="{idx.totals[v]}" data-src="{h(idx.href(src, idx.totals_file))}">'
            f"In the matrix of {len(idx.variants):,} variants.</p>")


def totals_json(idx: SiteIndex) -> str:
    """The totals file: every variant's total tokens, smallest first."""
    return json.dumps({"totals": sorted(idx.totals.values())}, separators=(",", ":")) + "\n"


def _details(summary: str, meta_rows: list[list[str | Cell]], text: str, *, anchor: str, key: str, cls: str) -> str:
    return "\n".join([
        f'<details class="{cls}" id="{anchor}">',
        f"<summary>{summary}</summary>",
        table([], meta_rows, cls="ps-meta"),
        pre(text, attrs={"data-ps-section": key}),
        "</details>",
    ])


def _section(idx: SiteIndex, page: str, u: SectionUse) -> str:
    """One section's <details>.  Variants share Section objects, and every
    variant page sits at the same depth, so the HTML is made once per
    (section, place, tokens) and reused across the build's pages."""
    fragment_href = idx.href(page, idx.fragment_page(u.section.fragment))
    key = ("section", id(u.section), u.message, u.index, u.tokens, u.estimate, fragment_href)
    hit = idx.memo.get(key)
    if hit is not None and hit[0] is u.section:
        return hit[1]
    out = _section_html(u, fragment_href)
    idx.memo[key] = (u.section, out)  # holds the Section, so its id is not reused
    return out


def _section_html(u: SectionUse, fragment_href: str) -> str:
    s = u.section
    marker = section_label(s)
    summary = (
        f'<span class="ps-idx">[{u.index:02}]</span> <strong>{h(s.fragment)}</strong> '
        f'<span class="ps-role ps-role-{h(s.role)}">{h(s.role)}</span> '
        # An unmarked section is labelled by its opening text: prompt text, not indexed.
        f"<code class=\"ps-marker\"{'' if s.start else ' data-search-exclude'}>{h(marker)}</code> "
        f'<span class="ps-tok">{num(u.tokens)} tokens</span>'
    )
    meta = [
        [Cell("fragment", header=True), link(fragment_href, f"<code>{h(s.fragment)}</code>") + f" in slot <code>{h(s.slot)}</code>"],
        [Cell("role", header=True), h(s.role)],
        [Cell("start marker", header=True), quoted(s.start) if s.start else "none"],
        [Cell("end marker", header=True), quoted(s.end) if s.end else "none"],
        [Cell("tokens", header=True), f"{num(u.tokens)} (Codex estimate {num(u.estimate)})"],
        [Cell("built from", header=True), _sources_html(s.sources) or f"<code>{h(s.source)}</code>"],
    ]
    return _details(summary, meta, s.text, anchor=section_id(u.message, u.index), key=f"{u.message}.{u.index}", cls=f"ps-section ps-role-{s.role}")


def _sources_html(refs) -> str:
    """Every file (and models.json / spec.yaml field) a text was built from, with its lines."""
    return ", ".join(f"<code>{h(str(r))}</code>" for r in refs)


def _prompt(idx: SiteIndex, v: Variant, page: str) -> list[str]:
    m = idx.measure[v]
    req = idx.request[v]
    base = req.base
    out = []
    summary = (
        '<strong>instructions</strong> <span class="ps-role ps-role-base">base</span> '
        f"<code>{h(base.rule)}</code> <span class=\"ps-tok\">{num(m.base)} tokens</span>"
    )
    meta = [
        [Cell("rule", header=True), f"<code>{h(base.rule)}</code>" + (f" — <code>{h(base.detail)}</code>" if base.detail else "")],
        [Cell("tokens", header=True), f"{num(m.base)} (Codex estimate {num(m.base_estimate)})"],
        [Cell("built from", header=True), _sources_html(base.sources) or f"<code>{h(base.source)}</code>"],
    ]
    out.append(block(_details(summary, meta, base.text, anchor="s-base", key="base", cls="ps-section ps-role-base"), cls="ps-prompt-part"))
    uses = idx.uses(v)
    for i, message in enumerate(req.messages):
        out.append(f"### {i:02} · {md_inline(message.role)} message")
        parts = [_section(idx, page, u) for u in uses if u.message == i]
        n = sum(m.sections[i])
        intro = f'<p class="ps-dim">{len(message.sections)} section{"s" if len(message.sections) != 1 else ""}, {num(n)} tokens, one <code>input_text</code> part each.</p>'
        out.append(block([intro, *parts], cls="ps-prompt-part"))
    return out


OTHERS_KEPT = "kept-other-variants"
"""idx.memo key of a dict kept across builds (build.PageCache under `mkdocs
serve`): each variant's "Other variants" table, compressed.  The table is
the matrix's shape alone (which variants exist and which have pages, where
pages live), and the cache empties it whenever that layout changes, so a
variant an edit re-made keeps it."""


def _others(idx: SiteIndex, v: Variant, page: str) -> str:
    kept = idx.memo.get(OTHERS_KEPT)
    if kept is None:
        return _others_table(idx, v, page)
    found = kept.get(v)
    if found is None:
        text = _others_table(idx, v, page)
        kept[v] = zlib.compress(text.encode("utf-8"), 1)
        return text
    return zlib.decompress(found).decode("utf-8")


def _others_table(idx: SiteIndex, v: Variant, page: str) -> str:
    # Every page links to ~60 other variants, each the same way from every
    # page in its folder: the variants along each axis are found once per
    # row (_other_rows), and each link's HTML is made once per (href, value).
    made = idx.memo.setdefault("others-links", {})
    rows = []
    for axis, _ in idx.axes:
        cells = []
        mine = v.value(axis)
        row = _other_rows(idx, axis)[idx.others(v, axis)]
        if len(row) > MAX_COMPARED + 1:  # linear site: a window around this value, not every value
            start, stop = window(idx, axis, mine)
            row = row[start:stop]
        for value, target in row:
            if value == mine:
                cells.append(f'<strong class="ps-current">{h(value)}</strong>')
            elif target is None:
                cells.append(f'<span class="ps-dim" title="excluded by the matrix rules">{h(value)}</span>')
            else:
                href = idx.href(page, *target)
                html = made.get((href, value))
                if html is None:
                    html = made[(href, value)] = link(href, h(value))
                cells.append(html)
        rows.append([Cell(h(axis), header=True), " · ".join(cells)])
    return table(["axis", "same variant with another value"], rows, cls="ps-others")


def _other_rows(idx: SiteIndex, axis: str) -> dict[tuple[tuple[str, str], ...], list[tuple[str, tuple[str, str | None] | None]]]:
    """The values on every axis but `axis` -> [(value of `axis`, where the
    variant with it links to, or None if the matrix excludes it)], in axis
    order: one lookup a row instead of one a value (idx.by_others)."""
    key = ("others-rows", axis)
    found = idx.memo.get(key)
    if found is None:
        values = dict(idx.axes)[axis]
        by_value = idx.by_others(axis)
        found = idx.memo[key] = {}
        for others in {o for vs in by_value.values() for o in vs}:
            row = []
            for value in values:
                other = by_value[value].get(others)
                row.append((value, None if other is None else idx.variant_target(other)))
            found[others] = row
    return found


def static_parts(idx: SiteIndex, v: Variant) -> tuple[str, str]:
    """The page around the changes part: (crumbs, facts and notes; tokens,
    send order, prompt and other variants)."""
    src = idx.variant_page(v)
    req = idx.request[v]
    top = [
        f'<p class="ps-crumbs">{link(idx.href(src, idx.matrix_page), "Matrix")} · '
        f'{link(idx.href(src, idx.axis_page("model", v.model)), h(v.model))} · '
        f"variant <code>{h(v.id)}</code> · "
        f'{link(idx.explorer_href(src, v), "open in explorer", cls="ps-explore")}</p>'
    ]
    top += ["", _facts(idx, v, src), ""]
    if req.notes:
        notes = "".join(f"<li>{h(n)}</li>" for n in req.notes)
        top += [block(f"<ul>{notes}</ul>", cls="ps-notes"), ""]
    out = ["## Tokens and send order", "", _bar(idx, v), "", _order(idx, v), ""]
    out += tool_pages.variant_tools(idx, v, src)
    out += ["## Assembled prompt", ""]
    out += [
        block(
            '<button type="button" class="md-button ps-expand" hidden>Expand all</button> '
            '<button type="button" class="md-button ps-collapse" hidden>Collapse all</button>',
            cls="ps-toolbar",
        ),
        "",
    ]
    for part in _prompt(idx, v, src):
        out += [part, ""]
    out += ["## Other variants", "", _others(idx, v, src), ""]
    return "\n".join(top), "\n".join(out)


def dynamic_parts(idx: SiteIndex, v: Variant) -> tuple[str, ...]:
    """What a variant's page holds besides static_parts: what depends on the
    matrix (its size, in the place line) and on the base (badges, the
    changes section).  Cheap next to static_parts, so a serve rebuild can
    tell whether a kept page is still what a new one would be (build.PageCache)."""
    from . import conformance as site_conformance

    src = idx.variant_page(v)
    badge = " ".join(b for b in (site_changes.badge(idx, v), site_conformance.badge(idx, v)) if b)
    return (idx.title(v), badge, place_line(idx, v), "\n".join(site_changes.variant_section(idx, v, src)))


def page(idx: SiteIndex, v: Variant, parts: tuple[str, str] | None = None,
         dynamic: tuple[str, ...] | None = None) -> str:
    """The variant's page; `parts` is static_parts(idx, v) and `dynamic`
    dynamic_parts(idx, v) when the caller kept them."""
    top, rest = parts if parts is not None else static_parts(idx, v)
    title, badge, place, changes = dynamic if dynamic is not None else dynamic_parts(idx, v)
    # Out of the search index: its prompt text is (markup.pre) and the rest
    # repeats the overview pages; the explorer's text search finds prompt text.
    meta = {"title": f"{title} · variant", "search": {"exclude": True}}
    # The heading is HTML, not Markdown: every variant page then has the same
    # Markdown skeleton (fast_pages), rendered once for all of them.  Without
    # an id, so the theme's table of contents is the page's sections as before.
    out = [front_matter(meta).rstrip("\n"), "", f"<h1>{h(title)}</h1>", ""]
    if badge:
        out += [f'<p class="ps-badges">{badge}</p>', ""]
    out.append(top)
    out += [place, ""]
    if changes:
        out.append(changes)
    out.append(rest)
    return "\n".join(out).rstrip("\n") + "\n"
