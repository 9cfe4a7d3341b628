"""What changed since a base: the Changes page and the variant pages' badges.

The site compares the spec with a *base* (plugin option `base`, `promptspec
build --base`): the spec folder's `prompts.lock.json` (review.compare_to_lock)
or another revision or folder of the spec (review.compare).  Both give the
same review Diff (review/change.py), so pages need not care which it was: variants added,
removed, changed and unchanged; identical section changes grouped (the same
fragment going from the same old to the same new content is one change,
listing every variant it reached); per changed variant the sections that
changed and their token deltas; largest increases; variants that now start
past their auto-compaction limit.  A lock holds hashes and token counts, not
text, so for a lock base the groups have no unified diff — pages say so.

Loading the base (reading the lock, git, running the pipeline) is I/O and
lives in base.py; everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ...review.change import INSTRUCTIONS, TOOL_PREFIX, ChangeGroup, Diff, VariantChange
from ..index import SiteIndex
from ..html.markup import (
    Cell,
    block,
    front_matter,
    h,
    link,
    md_inline,
    num,
    prompt_html,
    signed,
    table,
)
from ..html.page_parts import join_blocks, para


# ---------------------------------------------------------------------------
# What the pages are given


@dataclass(frozen=True)
class Changes:
    """The comparison the pages show -- a review Diff (review/change.py), the
    same value `check` or `diff` reports -- or, without one, why not: turned
    off, no lock file yet, or (under `mkdocs serve`) the base failed to load
    (`note`, `hint`)."""

    diff: Diff | None = None
    note: str = ""
    hint: str = ""
    failed: bool = False

    @property
    def compared(self) -> bool:
        return self.diff is not None

    @property
    def kind(self) -> str:
        """"lock" (a lock file), "git" (a revision or a folder), or "none"."""
        return "none" if self.diff is None else "lock" if self.diff.base_kind == "lock" else "git"

    @property
    def label(self) -> str:
        """The base as shown: "prompts.lock.json", "origin/main (1a2b3c4)"."""
        return self.diff.base_label if self.diff is not None else ""


def disabled() -> Changes:
    return Changes(note="No base to compare with: the site's <code>base</code> option is <code>none</code>.",
                   hint="Set it to <code>lock</code> (the spec folder's prompts.lock.json) or a git revision such as <code>origin/main</code>.")


def missing_lock(label: str) -> Changes:
    return Changes(note=f"There is no lock file yet (<code>{h(label)}</code> in the spec folder), so there is nothing to compare with.",
                   hint="Run <code>promptspec lock</code> to record what every variant sends now, and commit the file with the spec.")


def failed(label: str, message: str) -> Changes:
    return Changes(note=f"The base <code>{h(label)}</code> could not be loaded:", hint=f"<pre><code>{h(message)}</code></pre>", failed=True)


def compared(diff: Diff) -> Changes:
    return Changes(diff)


def variant_parts(diff: Diff, c: VariantChange) -> list[tuple[str, str, int | None, int | None, str, tuple[str, ...]]]:
    """A changed variant's parts as the pages list them: (fragment, kind, tokens
    before or None, tokens after or None, change id, changed sources) -- the
    sections (and base instructions) that changed, then the moves (with the
    tokens their change records)."""
    out: list[tuple[str, str, int | None, int | None, str, tuple[str, ...]]] = [(s.fragment, s.kind, s.before.tokens if s.before else None, s.after.tokens if s.after else None, s.group_id,
                            s.changed_sources) for s in c.all_changes]
    for m in c.moves:
        g = diff.group(m.group_id)
        tokens = next(((b, a) for v, b, a in g.tokens if v == c.id), (None, None))
        out.append((m.fragment, "moved", tokens[0], tokens[1], m.group_id, m.changed_sources))
    return out


def _delta(before: int | None, after: int | None) -> int:
    return (after or 0) - (before or 0)


def group_title(g: ChangeGroup) -> str:
    what = "base instructions" if g.fragment == INSTRUCTIONS else f"section {g.fragment}"  # as diff says it
    if g.section and g.fragment != INSTRUCTIONS and not g.fragment.startswith(("tool:", "(")) and g.section != f"({g.fragment})":
        what = f"section {g.fragment} {g.section}"
    return f"{what} {g.kind}"


def group_detail(g: ChangeGroup) -> tuple[str, ...]:
    """Plain lines for a move: the positions, and the group's order before and after."""
    if g.kind != "moved" or not g.moves:
        return ()
    m = g.moves[0]
    pairs = sorted({(x.group_before, x.position_before, x.group_after, x.position_after) for x in g.moves})
    pos = ", ".join(f"#{pb} → #{pa}" if gb == ga else f"{gb} #{pb} → {ga} #{pa}" for gb, pb, ga, pa in pairs)
    return (
        f"positions in its message: {pos}",
        f"order before ({m.group_before}, e.g. {g.variants[0]}): {', '.join(m.order_before)}",
        f"order after ({m.group_after}): {', '.join(m.order_after)}",
    )


def _changed(g: ChangeGroup) -> tuple[str, ...]:
    """What a change lists as changed: the sources whose content changed, else all it was built from."""
    return g.changed_sources or g.sources


def group_text_diff(g: ChangeGroup) -> str | None:
    """The group's unified diff; None for a move or when the base is a lock (no text)."""
    return None if g.kind == "moved" else g.diff


# ---------------------------------------------------------------------------
# Shared bits


LOCK_NOTE = (
    "The lock records a hash and the token count of every section, not its text, so this shows which sections "
    "changed and their token changes only. For the text that changed, run <code>promptspec diff REV</code> or set "
    "the site's <code>base</code> option to a git revision."
)


def _vlink(idx: SiteIndex, page: str, vid: str) -> str:
    v = idx.by_id.get(vid)
    return link(idx.variant_href(page, v), f"<code>{h(vid)}</code>") if v is not None else f"<code>{h(vid)}</code>"


def _part_name(idx: SiteIndex, page: str, fragment: str) -> str:
    if fragment == INSTRUCTIONS:
        return "base instructions"
    if any(f.name == fragment for f in idx.spec.fragments):
        return link(idx.href(page, idx.fragment_page(fragment)), f"<code>{h(fragment)}</code>")
    tool = fragment.removeprefix(TOOL_PREFIX)
    if tool != fragment and any(t.name == tool for t in idx.spec.tools):
        return "tool " + link(idx.href(page, idx.tool_page(tool)), f"<code>{h(tool)}</code>")
    return f"<code>{h(fragment)}</code>"


def _range(lo: int, hi: int) -> str:
    return signed(lo) if lo == hi else f"{signed(lo)} … {signed(hi)}"


def _spread(values: Sequence[int]) -> str:
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return num(lo) if lo == hi else f"{num(lo)}–{num(hi)}"


def _tok(n: int | None) -> str:
    return "–" if n is None else num(n)


def diff_html(diff: str) -> str:
    """A unified diff in a `<pre>`: every character shown exactly (escaped as
    prompt text), added/removed lines marked with a class for colour."""
    import itertools

    from ...review.worddiff import MAX_PAIRS, line_pairs, markup, word_ops

    # Word-level marks for paired removed/added lines: the changed words stand out in long lines.
    words: dict[tuple[str, str], str] = {}
    for old, new in itertools.islice(line_pairs(diff), MAX_PAIRS):
        ops = word_ops(old, new)
        if any(op == "=" and text.strip() for op, text in ops):
            words[("-", old)] = markup([(op, t) for op, t in ops if op != "+"], prompt_html, context=10**9).replace("<del>", '<del class="ps-word">')
            words[("+", new)] = markup([(op, t) for op, t in ops if op != "-"], prompt_html, context=10**9).replace("<ins>", '<ins class="ps-word">')
    out = []
    for line in diff.splitlines(keepends=True):
        # The newline as a reference, like prompt_html: the diff stays one
        # source line, so no blank line can end the raw block in any renderer.
        body, nl = (line[:-1], "&#10;") if line.endswith("\n") else (line, "")
        cls = None
        if body.startswith(("+++ ", "--- ")):
            cls = "ps-diff-file"
        elif body.startswith("@@"):
            cls = "ps-diff-hunk"
        elif body.startswith("+"):
            cls = "ps-diff-add"
        elif body.startswith("-"):
            cls = "ps-diff-del"
        marked = words.get((body[:1], body[1:])) if cls in ("ps-diff-add", "ps-diff-del") else None
        text = prompt_html(body[:1]) + marked if marked is not None else prompt_html(body)
        out.append((f'<span class="{cls}">{text}</span>' if cls else text) + nl)
    return f'<pre class="ps-udiff" data-search-exclude><code>{"".join(out)}</code></pre>'


def _capped(idx: SiteIndex, items: list, what: str) -> tuple[list, list[str]]:
    """The first `idx.list_limit` items, and a note on the rest, so the page
    stays bounded however many variants a change reaches."""
    limit = idx.list_limit
    if len(items) <= limit:
        return items, []
    note = block(para(f"… and {len(items) - limit:,} more {h(what)}, not listed here (more than {limit:,}); "
                    "<code>promptspec check</code> or <code>promptspec diff</code> lists every one."), cls="ps-intro ps-more")
    return items[:limit], [note, ""]


def _headline(ch: Changes, d: Diff) -> str:
    return f"Compared with <code>{h(ch.label)}</code>" + (f" (head: {h(d.head_label)})" if ch.kind == "git" else "")


# ---------------------------------------------------------------------------
# The Changes page


def changes_page(idx: SiteIndex) -> str:
    page = idx.changes_page
    ch: Changes = idx.changes or disabled()
    out = [front_matter({"title": "Changes"}).rstrip("\n"), "", "# Changes since the base", ""]
    if not ch.compared:
        cls = "ps-intro ps-error admonition failure" if ch.failed else "ps-intro ps-changes-none"
        out += [block([para(ch.note), ch.hint if ch.failed else para(ch.hint)], cls=cls), ""]
        return join_blocks(out)
    d = ch.diff
    assert d is not None
    intro = (
        f"{_headline(ch, d)}: the same comparison as <code>promptspec "
        f"{'check' if ch.kind == 'lock' else 'diff'}</code>. A variant is <em>changed</em> when the exact request it sends differs."
    )
    out += [block([para(intro), *([para(LOCK_NOTE)] if ch.kind == "lock" and not d.is_empty else [])], cls="ps-intro"), ""]
    counts = [
        [Cell("changed", header=True), Cell(num(len(d.changed)), "ps-r")],
        [Cell("added", header=True), Cell(num(len(d.added)), "ps-r")],
        [Cell("removed", header=True), Cell(num(len(d.removed)), "ps-r")],
        [Cell("unchanged", header=True), Cell(num(len(d.unchanged)), "ps-r")],
    ]
    out += [table(["variants", Cell("count", "ps-r")], counts, cls="ps-facts ps-change-counts", searchable=False), ""]
    if d.is_empty:
        out += [block(para("No assembled request differs from the base."), cls="ps-intro ps-changes-empty"), ""]
        return join_blocks(out)
    alerts = d.headroom_crossings()
    if alerts:
        alerts, rest = _capped(idx, alerts, "variants")
        items = "".join(
            f"<li>{_vlink(idx, page, vid)} now starts past its auto-compaction limit "
            f"({'new variant' if before is None else 'headroom ' + num(before)} → {num(after)})</li>"
            for vid, before, after in alerts
        )
        out += ["## Alerts", "", block(f"<ul>{items}</ul>", cls="ps-alerts admonition warning"), "", *rest]
    if d.files:
        reached = d.files_to_variants()
        rows = [[f"<code>{h(f.path)}</code>", h(f.status), Cell(num(n) if (n := len(reached.get(f.path, ()))) else "–", "ps-r")] for f in d.files]
        out += ["## Spec files changed", "", table(["file", "status", Cell("variants with sections from it", "ps-r")], rows), ""]
    out += _groups(idx, page, ch, d)
    inc = d.largest_increases()
    if inc:
        rows = [[_vlink(idx, page, c.id), Cell(num(c.total_before), "ps-r"), Cell(num(c.total_after), "ps-r"), Cell(signed(c.delta), "ps-r"),
                 Cell("–" if c.percent is None else f"{c.percent:+.1f}%", "ps-r")] for c in inc]
        out += ["## Largest token increases", "",
                table(["variant", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), Cell("%", "ps-r")], rows, cls="ps-nowrap", searchable=False), ""]
    if d.changed:
        rows = []
        shown, rest = _capped(idx, list(d.changed), "changed variants")
        for c in shown:
            parts = [f'{_part_name(idx, page, fragment)} {h(kind)} <small>{signed(_delta(before, after))}</small> '
                     f'<a href="#change-{h(gid)}">{h(gid)}</a>' for fragment, kind, before, after, gid, _ in variant_parts(d, c)]
            if c.encoding_before and c.encoding_after and c.encoding_before != c.encoding_after:
                parts.append(f"encoding <code>{h(c.encoding_before)}</code> → <code>{h(c.encoding_after)}</code>")
            rows.append([_vlink(idx, page, c.id), Cell(num(c.total_before), "ps-r"), Cell(num(c.total_after), "ps-r"),
                         Cell(signed(c.delta), "ps-r"), Cell("<br>".join(parts) or "–", "ps-text")])
        out += [f"## Changed variants ({len(d.changed)})", "",
                table(["variant", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), "sections (Δ tokens, change)"], rows, cls="ps-nowrap", searchable=False), "", *rest]
    if d.added:
        shown, rest = _capped(idx, list(d.added), "added variants")
        rows = [[_vlink(idx, page, a.id), Cell(num(a.total), "ps-r"), Cell(_tok(a.headroom), "ps-r")] for a in shown]
        out += [f"## Added variants ({len(d.added)})", "",
                table(["variant", Cell("tokens", "ps-r"), Cell("headroom before auto-compact", "ps-r")], rows, cls="ps-nowrap", searchable=False), "", *rest]
    if d.removed:
        shown, rest = _capped(idx, list(d.removed), "removed variants")
        rows = [[f"<code>{h(r.id)}</code>", Cell(num(r.total), "ps-r")] for r in shown]
        out += [f"## Removed variants ({len(d.removed)})", "", table(["variant", Cell("tokens in the base", "ps-r")], rows, cls="ps-nowrap", searchable=False), "", *rest]
    return join_blocks(out)


def _groups(idx: SiteIndex, page: str, ch: Changes, d: Diff) -> list[str]:
    if not d.groups:
        return []
    rows = []
    for g in d.groups:
        lo, hi = g.delta_range
        rows.append([
            link(f"#change-{g.id}", h(g.id)),
            f"{_part_name(idx, page, g.fragment)} {h(g.kind)}",
            ", ".join(f"<code>{h(s)}</code>" for s in _changed(g)) or "–",
            Cell(num(len(g.variants)), "ps-r"),
            Cell(_range(lo, hi), "ps-r"),
        ])
    out = [f"## Changes ({len(d.groups)})", ""]
    out += [block(para("Identical changes are one row: the same section going from the same old to the same new content, "
                     "in every variant it reached."), cls="ps-intro"), ""]
    out += [table(["#", "change", "what changed", Cell("variants", "ps-r"), Cell("Δ tokens", "ps-r")], rows), ""]
    for g in d.groups:
        out += [f"### {md_inline(g.id)} · {md_inline(group_title(g))}", ""]
        lo, hi = g.delta_range
        facts = (f"In {len(g.variants)} variant{'s' if len(g.variants) != 1 else ''}; tokens "
                 f"{_spread([b for _, b, _ in g.tokens])} → {_spread([a for _, _, a in g.tokens])} (Δ {_range(lo, hi)}).")
        reach = "" if d.base_kind == "lock" else d.describe(g.variants)  # a lock side has no axes recorded here
        if reach:
            facts += f" Variants: {h(reach)}."
        if _changed(g):
            facts += " Changed: " + ", ".join(f"<code>{h(s)}</code>" for s in _changed(g)) + "."
        if g.refs:
            facts += " Built from: " + ", ".join(f"<code>{h(str(r))}</code>" for r in g.refs) + "."
        listed = g.variants if len(g.variants) <= idx.list_limit else g.variants[: idx.list_limit]
        variants = " ".join(_vlink(idx, page, vid) for vid in listed)
        if len(listed) < len(g.variants):
            variants += f" … and {len(g.variants) - len(listed):,} more"
        inner = [para(facts), f'<details class="ps-change-variants"><summary>variants ({len(g.variants)})</summary>',
                 f'<p class="ps-variants">{variants}</p>', "</details>"]
        detail, text_diff = group_detail(g), group_text_diff(g)
        if detail:
            inner.append("<ul>" + "".join(f"<li>{h(line)}</li>" for line in detail) + "</ul>")
        if text_diff:
            inner.append(diff_html(text_diff))
        elif text_diff is None and ch.kind == "lock":
            inner.append('<p class="ps-dim">No text diff: the lock has hashes and token counts only.</p>')
        out += [block(inner, cls="ps-change", attrs={"id": f"change-{g.id}"}), ""]
    return out


# ---------------------------------------------------------------------------
# Variant pages


BADGES = {
    "changed": ("ps-badge ps-badge-changed", "changed since base"),
    "added": ("ps-badge ps-badge-added", "new since base"),
}


def badge(idx: SiteIndex, v: Any) -> str:
    """The inline "changed since base" badge (empty for unchanged variants)."""
    ch: Changes | None = idx.changes
    if ch is None or not ch.compared:
        return ""
    status = ch.diff.status_of(v.id) if ch.diff is not None else "unknown"
    if status not in BADGES:
        return ""
    cls, label = BADGES[status]
    return f'<span class="{cls}" title="compared with {h(ch.label)}">{label}</span>'


def variant_section(idx: SiteIndex, v: Any, page: str) -> list[str]:
    """"Changes since base" on a changed or added variant's page."""
    ch: Changes | None = idx.changes
    if ch is None or ch.diff is None:
        return []
    d = ch.diff
    status = d.status_of(v.id)
    overview = link(idx.href(page, idx.changes_page), "all changes")
    if status == "added":
        return ["## Changes since base", "",
                block(para(f"This variant is not in the base <code>{h(ch.label)}</code> ({overview})."), cls="ps-intro"), ""]
    c = d.variant(v.id)
    if status != "changed" or c is None:
        return []
    out = ["## Changes since base", ""]
    intro = f"{_headline(ch, d)}: {num(c.total_before)} → {num(c.total_after)} tokens ({signed(c.delta)}); {overview}."
    out += [block([para(intro), *([para(LOCK_NOTE)] if ch.kind == "lock" else [])], cls="ps-intro"), ""]
    here = idx.href(page, idx.changes_page)
    parts = variant_parts(d, c)
    rows = [[
        _part_name(idx, page, fragment), h(kind), Cell(_tok(before), "ps-r"), Cell(_tok(after), "ps-r"),
        Cell(signed(_delta(before, after)), "ps-r"), ", ".join(f"<code>{h(x)}</code>" for x in sources) or "–", link(f"{here}#change-{gid}", h(gid)),
    ] for fragment, kind, before, after, gid, sources in parts]
    if c.encoding_before and c.encoding_after and c.encoding_before != c.encoding_after:
        rows.append(["encoding", f"<code>{h(c.encoding_before)}</code> → <code>{h(c.encoding_after)}</code>", "", "", "", "", ""])
    if rows:
        out += [table(["part", "change", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), "what changed", "#"], rows, cls="ps-nowrap"), ""]
    for fragment, kind, before, after, gid, _ in parts:
        g = d.group(gid)
        detail, text_diff = group_detail(g), group_text_diff(g)
        if not (text_diff or detail):
            continue
        name = "base instructions" if fragment == INSTRUCTIONS else h(fragment)
        inner = [f'<details class="ps-section ps-change-diff"><summary><strong>{name}</strong> {h(kind)} <span class="ps-tok">{signed(_delta(before, after))}</span></summary>']
        if detail:
            inner.append("<ul>" + "".join(f"<li>{h(line)}</li>" for line in detail) + "</ul>")
        if text_diff:
            inner.append(diff_html(text_diff))
        inner.append("</details>")
        out += [block(inner, cls="ps-prompt-part"), ""]
    return out
