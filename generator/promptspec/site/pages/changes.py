"""What changed since a base: the Changes page and the variant pages' badges.

The site compares the spec with a *base* (plugin option `base`, `promptspec
build --base`): the spec folder's `prompts.lock.json` (review.compare_to_lock)
or another revision or folder of the spec (review.compare).  Both become one
`Changes` value here, so pages need not care which it was: variants added,
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

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ... import review
from ...review.diff import headroom_crossings
from ...review.lockfile import INSTRUCTIONS, TOOL_PREFIX
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

KIND_RANK = {"changed": 0, "added": 1, "removed": 2, "moved": 3, "retokenized": 4}


# ---------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Part:
    """One section (or the base instructions) that changed in one variant."""

    fragment: str  # fragment name, or lockfile.INSTRUCTIONS
    kind: str  # changed | added | removed | moved | retokenized
    before: int | None  # tokens
    after: int | None
    group: str  # id of the Group holding it ("c1"...)
    sources: tuple[str, ...] = ()  # the sources whose content changed behind it

    @property
    def delta(self) -> int:
        return (self.after or 0) - (self.before or 0)


@dataclass(frozen=True)
class VariantDelta:
    id: str
    before: int
    after: int
    parts: tuple[Part, ...]
    headroom_before: int | None
    headroom_after: int | None
    encoding_before: str | None = None
    encoding_after: str | None = None

    @property
    def delta(self) -> int:
        return self.after - self.before

    @property
    def percent(self) -> float | None:
        return review.percent_change(self.before, self.after)

    @property
    def crosses_headroom(self) -> bool:
        return review.crosses_headroom(self.headroom_before, self.headroom_after)


@dataclass(frozen=True)
class Group:
    """One distinct change and every variant it appears in."""

    id: str
    fragment: str
    kind: str
    sources: tuple[str, ...]
    variants: tuple[str, ...]
    tokens: tuple[tuple[str, int, int], ...]  # (variant, before, after)
    diff: str | None  # unified diff; None when the base has no text (a lock)
    detail: tuple[str, ...] = ()  # plain lines for moves (positions, orders)
    built_from: tuple[str, ...] = ()  # every source behind the section (`sources` holds those that changed)
    reach: str = ""  # the variants by axis: "24 of 88 variants — mode = plan (...)"
    section: str = ""  # how the section reads (its start marker)

    @property
    def delta_range(self) -> tuple[int, int]:
        deltas = [a - b for _, b, a in self.tokens] or [0]
        return min(deltas), max(deltas)

    @property
    def title(self) -> str:
        what = "base instructions" if self.fragment == INSTRUCTIONS else f"section {self.fragment}"  # as diff says it
        if self.section and self.fragment != INSTRUCTIONS and not self.fragment.startswith(("tool:", "(")) and self.section != f"({self.fragment})":
            what = f"section {self.fragment} {self.section}"
        return f"{what} {self.kind}"


@dataclass(frozen=True)
class Changes:
    """The comparison the pages show; see the module docstring.

    `kind` is "lock" or "git" (a revision or a folder) when there is a
    comparison, else "none" with `note` (and `hint`) saying why: turned off,
    no lock file yet, or (under `mkdocs serve`) the base failed to load."""

    kind: str
    label: str  # the base as shown: "prompts.lock.json", "origin/main (1a2b3c4)"
    head_label: str = "this spec"
    added: tuple[tuple[str, int, int | None], ...] = ()  # (variant, tokens, headroom)
    removed: tuple[tuple[str, int], ...] = ()
    changed: tuple[VariantDelta, ...] = ()
    unchanged: tuple[str, ...] = ()
    groups: tuple[Group, ...] = ()
    files: tuple[tuple[str, str, int], ...] = ()  # (path, status, variants with sections from it)
    note: str = ""
    hint: str = ""
    failed: bool = False
    _status: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _changed: Mapping[str, VariantDelta] = field(default_factory=dict, repr=False, compare=False)
    _groups: Mapping[str, Group] = field(default_factory=dict, repr=False, compare=False)

    @property
    def compared(self) -> bool:
        return self.kind != "none"

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def status_of(self, variant_id: str) -> str:
        """added | changed | unchanged | unknown (no comparison)."""
        return self._status.get(variant_id, "unknown")

    def variant(self, variant_id: str) -> VariantDelta | None:
        return self._changed.get(variant_id)

    def group(self, group_id: str) -> Group | None:
        return self._groups.get(group_id)

    def largest_increases(self, n: int = 10) -> list[VariantDelta]:
        return review.largest_increases(self.changed, n)

    def headroom_crossings(self) -> list[tuple[str, int | None, int]]:
        """(variant, headroom before or None if new, headroom after): now past auto-compaction."""
        return headroom_crossings(self.changed, ((vid, hr) for vid, _, hr in self.added))


def _with_status(**kwargs: Any) -> Changes:
    status = {v: "unchanged" for v in kwargs.get("unchanged", ())}
    status.update({v: "added" for v, _, _ in kwargs.get("added", ())})
    status.update({c.id: "changed" for c in kwargs.get("changed", ())})
    return Changes(**kwargs, _status=status, _changed={c.id: c for c in kwargs.get("changed", ())},
                   _groups={g.id: g for g in kwargs.get("groups", ())})


def disabled() -> Changes:
    return Changes("none", "", note="No base to compare with: the site's <code>base</code> option is <code>none</code>.",
                   hint="Set it to <code>lock</code> (the spec folder's prompts.lock.json) or a git revision such as <code>origin/main</code>.")


def missing_lock(label: str) -> Changes:
    return Changes("none", label, note=f"There is no lock file yet (<code>{h(label)}</code> in the spec folder), so there is nothing to compare with.",
                   hint="Run <code>promptspec lock</code> to record what every variant sends now, and commit the file with the spec.")


def failed(label: str, message: str) -> Changes:
    return Changes("none", label, note=f"The base <code>{h(label)}</code> could not be loaded:", hint=f"<pre><code>{h(message)}</code></pre>", failed=True)


def from_diff(diff: Any) -> Changes:
    """From a review.Diff (a git revision or another spec folder)."""
    groups = []
    for g in diff.groups:
        detail: tuple[str, ...] = ()
        if g.kind == "moved" and g.moves:
            m = g.moves[0]
            pairs = sorted({(x.group_before, x.position_before, x.group_after, x.position_after) for x in g.moves})
            pos = ", ".join(f"#{pb} → #{pa}" if gb == ga else f"{gb} #{pb} → {ga} #{pa}" for gb, pb, ga, pa in pairs)
            detail = (
                f"positions in its message: {pos}",
                f"order before ({m.group_before}, e.g. {g.variants[0]}): {', '.join(m.order_before)}",
                f"order after ({m.group_after}): {', '.join(m.order_after)}",
            )
        groups.append(Group(g.id, g.fragment, g.kind, tuple(g.changed_sources or g.sources), tuple(g.variants), tuple(g.tokens),
                            None if g.kind == "moved" else g.diff, detail, tuple(str(r) for r in g.refs), diff.describe(g.variants),
                            getattr(g, "section", "")))
    tokens_of = {g.id: {v: (b, a) for v, b, a in g.tokens} for g in diff.groups if g.kind == "moved"}
    changed = []
    for c in diff.changed:
        parts = [Part(s.fragment, s.kind, s.tokens_before if s.before else None, s.tokens_after if s.after else None, s.group_id,
                      s.changed_sources) for s in c.all_changes]
        for m in c.moves:
            tokens = tokens_of.get(m.group_id, {}).get(c.id, (None, None))
            parts.append(Part(m.fragment, "moved", tokens[0], tokens[1], m.group_id, m.changed_sources))
        changed.append(VariantDelta(c.id, c.total_before, c.total_after, tuple(parts), c.headroom_before, c.headroom_after,
                                    c.encoding_before, c.encoding_after))
    f2v = diff.files_to_variants()
    return _with_status(
        kind="git", label=diff.base_label, head_label=diff.head_label,
        added=tuple((a.id, a.total, a.headroom) for a in diff.added),
        removed=tuple((r.id, r.total) for r in diff.removed),
        changed=tuple(changed), unchanged=tuple(diff.unchanged), groups=tuple(groups),
        files=tuple((f.path, f.status, len(f2v.get(f.path, ()))) for f in diff.files),
    )


def from_lock(label: str, lock_data: Mapping[str, Any], lock_diff: Any, head: Mapping[str, Any], measures: Mapping[str, Any]) -> Changes:
    """From a lockfile.LockDiff; `lock_data` is the lock as read, `head` is
    lockfile.build(result) (for section hashes, so identical changes group),
    `measures` maps variant id -> Measure (for headroom with today's limits)."""
    old, new = lock_data.get("variants") or {}, head["variants"]
    keyed: dict[tuple[str, ...], dict[str, Any]] = {}
    raw = []
    for c in lock_diff.changed:
        parts = []
        for s in c.sections:
            key = (s.fragment, s.kind, _sha(old.get(c.id), s.fragment), _sha(new.get(c.id), s.fragment))
            g = keyed.setdefault(key, {"variants": [], "tokens": [], "sources": set()})
            g["sources"].update(getattr(s, "changed_sources", ()))
            g["variants"].append(c.id)
            g["tokens"].append((c.id, s.tokens_before or 0, s.tokens_after or 0))
            parts.append((s, key))
        raw.append((c, parts))
    ordered = sorted(keyed.items(), key=lambda kv: (-len(kv[1]["variants"]), kv[0][0] != INSTRUCTIONS, kv[0][0], KIND_RANK.get(kv[0][1], 9), kv[0]))
    ids = {key: f"c{i}" for i, (key, _) in enumerate(ordered, 1)}
    groups = tuple(Group(ids[k], k[0], k[1], tuple(sorted(g["sources"])), tuple(g["variants"]), tuple(g["tokens"]), None) for k, g in ordered)

    def estimate(vid: str, side: str) -> int | None:
        """Codex's ⌈bytes/4⌉ estimate, which it compares with the limit: the lock's for the base, today's for the head."""
        if side == "head":
            return getattr(measures.get(vid), "estimate", None)
        value = ((old.get(vid) or {}).get("tokens") or {}).get("codex_estimate")
        return value if isinstance(value, int) else None

    def headroom(vid: str, total: int | None, side: str = "head") -> int | None:
        m = measures.get(vid)
        limit = getattr(m, "compact_limit", None)
        est = estimate(vid, side)
        return None if limit is None or total is None or est is None else limit - est

    changed = tuple(
        VariantDelta(c.id, c.total_before, c.total_after,
                     tuple(Part(s.fragment, s.kind, s.tokens_before, s.tokens_after, ids[k], tuple(getattr(s, "changed_sources", ()))) for s, k in parts),
                     headroom(c.id, c.total_before, "base"), headroom(c.id, c.total_after), c.encoding_before, c.encoding_after)
        for c, parts in raw
    )
    return _with_status(
        kind="lock", label=label,
        added=tuple((v.id, v.total, headroom(v.id, v.total)) for v in lock_diff.added),
        removed=tuple((v.id, v.total) for v in lock_diff.removed),
        changed=changed, unchanged=tuple(lock_diff.unchanged), groups=groups,
    )


def _sha(entry: Any, fragment: str) -> str:
    if not isinstance(entry, Mapping):
        return "-"
    if fragment == INSTRUCTIONS:
        part = entry.get("instructions")
    elif fragment.startswith(TOOL_PREFIX):  # tools are recorded beside the sections
        part = (entry.get("tools") or {}).get(fragment[len(TOOL_PREFIX):])
    else:
        part = (entry.get("sections") or {}).get(fragment)
    return str(part.get("sha256")) if isinstance(part, Mapping) else "-"


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


def _headline(ch: Changes) -> str:
    return f"Compared with <code>{h(ch.label)}</code>" + (f" (head: {h(ch.head_label)})" if ch.kind == "git" else "")


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
    intro = (
        f"{_headline(ch)}: the same comparison as <code>promptspec "
        f"{'check' if ch.kind == 'lock' else 'diff'}</code>. A variant is <em>changed</em> when the exact request it sends differs."
    )
    out += [block([para(intro), *([para(LOCK_NOTE)] if ch.kind == "lock" and not ch.is_empty else [])], cls="ps-intro"), ""]
    counts = [
        [Cell("changed", header=True), Cell(num(len(ch.changed)), "ps-r")],
        [Cell("added", header=True), Cell(num(len(ch.added)), "ps-r")],
        [Cell("removed", header=True), Cell(num(len(ch.removed)), "ps-r")],
        [Cell("unchanged", header=True), Cell(num(len(ch.unchanged)), "ps-r")],
    ]
    out += [table(["variants", Cell("count", "ps-r")], counts, cls="ps-facts ps-change-counts"), ""]
    if ch.is_empty:
        out += [block(para("No assembled request differs from the base."), cls="ps-intro ps-changes-empty"), ""]
        return join_blocks(out)
    alerts = ch.headroom_crossings()
    if alerts:
        alerts, rest = _capped(idx, alerts, "variants")
        items = "".join(
            f"<li>{_vlink(idx, page, vid)} now starts past its auto-compaction limit "
            f"({'new variant' if before is None else 'headroom ' + num(before)} → {num(after)})</li>"
            for vid, before, after in alerts
        )
        out += ["## Alerts", "", block(f"<ul>{items}</ul>", cls="ps-alerts admonition warning"), "", *rest]
    if ch.files:
        rows = [[f"<code>{h(p)}</code>", h(s), Cell(num(n) if n else "–", "ps-r")] for p, s, n in ch.files]
        out += ["## Spec files changed", "", table(["file", "status", Cell("variants with sections from it", "ps-r")], rows), ""]
    out += _groups(idx, page, ch)
    inc = ch.largest_increases()
    if inc:
        rows = [[_vlink(idx, page, c.id), Cell(num(c.before), "ps-r"), Cell(num(c.after), "ps-r"), Cell(signed(c.delta), "ps-r"),
                 Cell("–" if c.percent is None else f"{c.percent:+.1f}%", "ps-r")] for c in inc]
        out += ["## Largest token increases", "",
                table(["variant", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), Cell("%", "ps-r")], rows, cls="ps-nowrap"), ""]
    if ch.changed:
        rows = []
        shown, rest = _capped(idx, list(ch.changed), "changed variants")
        for c in shown:
            parts = [f'{_part_name(idx, page, p.fragment)} {h(p.kind)} <small>{signed(p.delta)}</small> '
                     f'<a href="#change-{h(p.group)}">{h(p.group)}</a>' for p in c.parts]
            if c.encoding_before and c.encoding_after and c.encoding_before != c.encoding_after:
                parts.append(f"encoding <code>{h(c.encoding_before)}</code> → <code>{h(c.encoding_after)}</code>")
            rows.append([_vlink(idx, page, c.id), Cell(num(c.before), "ps-r"), Cell(num(c.after), "ps-r"),
                         Cell(signed(c.delta), "ps-r"), Cell("<br>".join(parts) or "–", "ps-text")])
        out += [f"## Changed variants ({len(ch.changed)})", "",
                table(["variant", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), "sections (Δ tokens, change)"], rows, cls="ps-nowrap"), "", *rest]
    if ch.added:
        shown, rest = _capped(idx, list(ch.added), "added variants")
        rows = [[_vlink(idx, page, vid), Cell(num(t), "ps-r"), Cell(_tok(hr), "ps-r")] for vid, t, hr in shown]
        out += [f"## Added variants ({len(ch.added)})", "",
                table(["variant", Cell("tokens", "ps-r"), Cell("headroom before auto-compact", "ps-r")], rows, cls="ps-nowrap"), "", *rest]
    if ch.removed:
        shown, rest = _capped(idx, list(ch.removed), "removed variants")
        rows = [[f"<code>{h(vid)}</code>", Cell(num(t), "ps-r")] for vid, t in shown]
        out += [f"## Removed variants ({len(ch.removed)})", "", table(["variant", Cell("tokens in the base", "ps-r")], rows, cls="ps-nowrap"), "", *rest]
    return join_blocks(out)


def _groups(idx: SiteIndex, page: str, ch: Changes) -> list[str]:
    if not ch.groups:
        return []
    rows = []
    for g in ch.groups:
        lo, hi = g.delta_range
        rows.append([
            link(f"#change-{g.id}", h(g.id)),
            f"{_part_name(idx, page, g.fragment)} {h(g.kind)}",
            ", ".join(f"<code>{h(s)}</code>" for s in g.sources) or "–",
            Cell(num(len(g.variants)), "ps-r"),
            Cell(_range(lo, hi), "ps-r"),
        ])
    out = [f"## Changes ({len(ch.groups)})", ""]
    out += [block(para("Identical changes are one row: the same section going from the same old to the same new content, "
                     "in every variant it reached."), cls="ps-intro"), ""]
    out += [table(["#", "change", "what changed", Cell("variants", "ps-r"), Cell("Δ tokens", "ps-r")], rows), ""]
    for g in ch.groups:
        out += [f"### {md_inline(g.id)} · {md_inline(g.title)}", ""]
        lo, hi = g.delta_range
        facts = (f"In {len(g.variants)} variant{'s' if len(g.variants) != 1 else ''}; tokens "
                 f"{_spread([b for _, b, _ in g.tokens])} → {_spread([a for _, _, a in g.tokens])} (Δ {_range(lo, hi)}).")
        if g.reach:
            facts += f" Variants: {h(g.reach)}."
        if g.sources:
            facts += " Changed: " + ", ".join(f"<code>{h(s)}</code>" for s in g.sources) + "."
        if g.built_from:
            facts += " Built from: " + ", ".join(f"<code>{h(s)}</code>" for s in g.built_from) + "."
        listed = g.variants if len(g.variants) <= idx.list_limit else g.variants[: idx.list_limit]
        variants = " ".join(_vlink(idx, page, vid) for vid in listed)
        if len(listed) < len(g.variants):
            variants += f" … and {len(g.variants) - len(listed):,} more"
        inner = [para(facts), f'<details class="ps-change-variants"><summary>variants ({len(g.variants)})</summary>',
                 f'<p class="ps-variants">{variants}</p>', "</details>"]
        if g.detail:
            inner.append("<ul>" + "".join(f"<li>{h(line)}</li>" for line in g.detail) + "</ul>")
        if g.diff:
            inner.append(diff_html(g.diff))
        elif g.diff is None and ch.kind == "lock":
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
    status = ch.status_of(v.id)
    if status not in BADGES:
        return ""
    cls, label = BADGES[status]
    return f'<span class="{cls}" title="compared with {h(ch.label)}">{label}</span>'


def variant_section(idx: SiteIndex, v: Any, page: str) -> list[str]:
    """"Changes since base" on a changed or added variant's page."""
    ch: Changes | None = idx.changes
    if ch is None or not ch.compared:
        return []
    status = ch.status_of(v.id)
    overview = link(idx.href(page, idx.changes_page), "all changes")
    if status == "added":
        return ["## Changes since base", "",
                block(para(f"This variant is not in the base <code>{h(ch.label)}</code> ({overview})."), cls="ps-intro"), ""]
    c = ch.variant(v.id)
    if status != "changed" or c is None:
        return []
    out = ["## Changes since base", ""]
    intro = f"{_headline(ch)}: {num(c.before)} → {num(c.after)} tokens ({signed(c.delta)}); {overview}."
    out += [block([para(intro), *([para(LOCK_NOTE)] if ch.kind == "lock" else [])], cls="ps-intro"), ""]
    here = idx.href(page, idx.changes_page)
    rows = [[
        _part_name(idx, page, p.fragment), h(p.kind), Cell(_tok(p.before), "ps-r"), Cell(_tok(p.after), "ps-r"),
        Cell(signed(p.delta), "ps-r"), ", ".join(f"<code>{h(x)}</code>" for x in p.sources) or "–", link(f"{here}#change-{p.group}", h(p.group)),
    ] for p in c.parts]
    if c.encoding_before and c.encoding_after and c.encoding_before != c.encoding_after:
        rows.append(["encoding", f"<code>{h(c.encoding_before)}</code> → <code>{h(c.encoding_after)}</code>", "", "", "", "", ""])
    if rows:
        out += [table(["part", "change", Cell("before", "ps-r"), Cell("after", "ps-r"), Cell("Δ", "ps-r"), "what changed", "#"], rows, cls="ps-nowrap"), ""]
    for p in c.parts:
        g = ch.group(p.group)
        if g is None or not (g.diff or g.detail):
            continue
        name = "base instructions" if p.fragment == INSTRUCTIONS else h(p.fragment)
        inner = [f'<details class="ps-section ps-change-diff"><summary><strong>{name}</strong> {h(p.kind)} <span class="ps-tok">{signed(p.delta)}</span></summary>']
        if g.detail:
            inner.append("<ul>" + "".join(f"<li>{h(line)}</li>" for line in g.detail) + "</ul>")
        if g.diff:
            inner.append(diff_html(g.diff))
        inner.append("</details>")
        out += [block(inner, cls="ps-prompt-part"), ""]
    return out
