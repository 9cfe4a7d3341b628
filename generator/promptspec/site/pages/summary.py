"""Summaries for overview pages of large matrices.

Listing every variant keeps an overview page readable while a matrix is
small; at 10,000 variants a model page that lists and compares every variant
is megabytes of HTML nobody reads.  Above the site's list limit
(index.LIST_LIMIT) the model/personality/mode/axis pages, the matrix
and the fragment pages show what a reader wants from that many variants
instead -- counts, min/median/max tokens per value of every other axis, the
parts that differ between two values with their token delta ranges -- and
link single variants to the explorer (or to their page, where they have one).

Comparisons between two values of an axis are computed once per pair of
values (`comparison`, kept in `SiteIndex.memo`) and read from both values'
pages; each is an aggregate of what every pair of variants that differ only
in that axis adds to it (`_pair`), which under `mkdocs serve` is kept for
the pairs an edit did not reach (`KEPT`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from ...assemble.request import Variant
from ..index import SiteIndex
from ..html.markup import Cell, block, h, link, num, signed, table
from ..html.page_parts import para

INSTRUCTIONS = "instructions"

MAX_COMPARED = 12
"""How many other values of an axis one value's page compares with (and a
variant page links to, per axis).  Comparing every value with every other is
quadratic: 2,000 models made a 3.4 GB site.  Above this, each page takes the
values nearest to its own in axis order, so the site stays linear in the
number of values; the explorer still pairs any two."""


def neighbours(idx: SiteIndex, axis: str, value: str, limit: int = MAX_COMPARED) -> list[str]:
    """The other values a page about `value` compares with: all of them up to
    `limit`, else the `limit` nearest in axis order (a window around `value`,
    found in constant time so that all pages together stay linear)."""
    values = dict(idx.axes)[axis]
    start, stop = window(idx, axis, value, limit)
    return [x for x in values[start:stop] if x != value][:limit]


def window(idx: SiteIndex, axis: str, value: str, limit: int = MAX_COMPARED) -> tuple[int, int]:
    """The slice of the axis's values (in order) around `value`: at most `limit` others."""
    values = dict(idx.axes)[axis]
    if len(values) <= limit + 1:
        return 0, len(values)
    pos = idx.memo.get(("axis-pos", axis))
    if pos is None:
        pos = idx.memo[("axis-pos", axis)] = {x: i for i, x in enumerate(values)}
    start = max(0, min(pos.get(value, 0) - limit // 2, len(values) - limit - 1))
    return start, start + limit + 1


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# ---------------------------------------------------------------------------
# Comparisons along one axis, computed once per pair of values


@dataclass
class PartDiff:
    """One part across the pairs of a comparison."""

    name: str  # fragment name, or "instructions"
    differs: int = 0  # pairs whose text of this part differs (including only-here/only-there)
    only_here: int = 0  # pairs where only the first variant has it
    only_there: int = 0
    lo: int = 0  # token delta range over the differing pairs (first minus second)
    hi: int = 0
    example: tuple[Variant, Variant] | None = None  # the pair with the largest |delta|
    _best: int = -1

    def add(self, delta: int, kind: str, pair: tuple[Variant, Variant]) -> None:
        if self.differs == 0:
            self.lo = self.hi = delta
        else:
            self.lo, self.hi = min(self.lo, delta), max(self.hi, delta)
        self.differs += 1
        if kind == "+":
            self.only_here += 1
        elif kind == "-":
            self.only_there += 1
        if abs(delta) > self._best:
            self._best = abs(delta)
            self.example = pair

    def flipped(self) -> "PartDiff":
        example = None if self.example is None else (self.example[1], self.example[0])
        return replace(self, only_here=self.only_there, only_there=self.only_here, lo=-self.hi, hi=-self.lo, example=example)


@dataclass
class Comparison:
    axis: str
    value: str
    other: str
    pairs: int = 0
    identical: int = 0  # pairs with no differing part
    deltas: list[int] = field(default_factory=list)  # total tokens, first minus second, per pair
    parts: list[PartDiff] = field(default_factory=list)  # in spec order, instructions first
    largest: tuple[Variant, Variant] | None = None  # the pair with the largest |total delta|

    def flipped(self) -> "Comparison":
        return Comparison(
            self.axis, self.other, self.value, self.pairs, self.identical, [-d for d in self.deltas],
            [p.flipped() for p in self.parts], None if self.largest is None else (self.largest[1], self.largest[0]),
        )


def _same_text(a, b) -> bool:
    return a is b or (a.body == b.body and a.start == b.start and a.end == b.end) or a.text == b.text


def _part_order(idx: SiteIndex) -> dict[str, int]:
    order = idx.memo.get("part_order")
    if order is None:
        order = idx.memo["part_order"] = {INSTRUCTIONS: -1, **{f.name: i for i, f in enumerate(idx.spec.fragments)}}
    return order


class _Rec:
    """What a comparison reads of one variant, looked up once."""

    __slots__ = ("v", "total", "base", "base_text", "secs")

    def __init__(self, idx: SiteIndex, v: Variant):
        self.v = v
        self.total = idx.totals[v]
        self.base = idx.measure[v].base
        self.base_text = idx.request[v].base.text
        self.secs = idx.sections_by_fragment(v)


def _records(idx: SiteIndex) -> dict[Variant, _Rec]:
    """This build's records, made for a variant when first asked for."""
    recs = idx.memo.get("records")
    if recs is None:
        recs = idx.memo["records"] = {}
    return recs


def _rec(idx: SiteIndex, recs: dict[Variant, _Rec], v: Variant) -> _Rec:
    found = recs.get(v)
    if found is None:
        found = recs[v] = _Rec(idx, v)
    return found


def _groups(idx: SiteIndex, axis: str) -> dict[str, dict[tuple, _Rec]]:
    """by_others(axis) with a record per variant instead of the variant."""
    key = ("groups", axis)
    found = idx.memo.get(key)
    if found is None:
        recs = _records(idx)
        found = idx.memo[key] = {x: {o: _rec(idx, recs, v) for o, v in g.items()} for x, g in idx.by_others(axis).items()}
    return found


Pair = tuple[int, tuple[tuple[str, int, str], ...]]
"""What one pair of variants adds to a comparison: its total delta, and
(part, token delta, kind) for each part whose text differs (kind "+": only
the first has it, "-": only the second; `_aggregate` puts the parts in order)."""


def _pair(rv: _Rec, rw: _Rec) -> Pair:
    """Most parts of two variants that differ in one axis are the same
    object (the Assembler shares a rendering between variants), so each
    part costs an identity check; only the rest compare their text."""
    sv, sw = rv.secs, rw.secs
    diffs: list[tuple[str, int, str]] = []
    if rv.base_text != rw.base_text:
        diffs.append((INSTRUCTIONS, rv.base - rw.base, ""))
    for name, ua in sv.items():
        ub = sw.get(name)
        if ub is None:
            diffs.append((name, ua.tokens, "+"))
        elif not _same_text(ua.section, ub.section):
            diffs.append((name, ua.tokens - ub.tokens, ""))
    diffs += [(name, -ub.tokens, "-") for name, ub in sw.items() if name not in sv]
    return rv.total - rw.total, tuple(diffs)


def _pairs(idx: SiteIndex, axis: str, x: str, y: str) -> list[tuple[tuple, _Rec, _Rec]]:
    groups = _groups(idx, axis)
    gx, gy = groups.get(x, {}), groups.get(y, {})
    return [(o, rv, gy[o]) for o, rv in gx.items() if o in gy]


def _aggregate(idx: SiteIndex, axis: str, x: str, y: str, pairs: Sequence[tuple[Variant, Variant, Pair]]) -> Comparison:
    """The pairs in `_pairs` order, so that which pair is an example (the
    first with the largest delta) does not depend on which pairs were kept."""
    parts: dict[str, PartDiff] = {}
    cmp = Comparison(axis, x, y)
    best = -1
    for v, w, (delta, diffs) in pairs:
        for name, d, kind in diffs:
            part = parts.get(name)
            if part is None:
                part = parts[name] = PartDiff(name)
            part.add(d, kind, (v, w))
        cmp.pairs += 1
        cmp.identical += not diffs
        cmp.deltas.append(delta)
        if abs(delta) > best:
            best, cmp.largest = abs(delta), (v, w)
    order = _part_order(idx)
    cmp.parts = [parts[n] for n in sorted(parts, key=lambda n: (order.get(n, len(order)), n))]
    return cmp


def _compute(idx: SiteIndex, axis: str, x: str, y: str) -> Comparison:
    return _aggregate(idx, axis, x, y, [(rv.v, rw.v, _pair(rv, rw)) for _, rv, rw in _pairs(idx, axis, x, y)])


KEPT = "kept-comparisons"
"""idx.memo key of a dict kept across builds (build.PageCache under `mkdocs
serve`): per comparison, its pairs of variants and what each pair added to
it; under `_SEEN`, the Request and Measure objects the last build read."""

_SEEN = "seen"


def _changed(idx: SiteIndex, kept: dict) -> tuple[int, frozenset[Variant] | None]:
    """(this build's number, the variants whose Request or Measure is not
    the very object the last build had; None: there was no last build).
    Found once a build, so that a comparison none of them is in is read
    back without a look at its pairs; the objects are held in `kept`, so
    their ids cannot be reused by new ones."""
    found = idx.memo.get(_SEEN)
    if found is None:
        last = kept.get(_SEEN)
        if last is None:
            found = (0, None)
        else:
            requests, measures = last[1], last[2]
            found = (last[0] + 1, frozenset(v for v in idx.variants if idx.request[v] is not requests.get(v)
                                            or idx.measure[v] is not measures.get(v)))
        kept[_SEEN] = (found[0], idx.request, idx.measure)
        idx.memo[_SEEN] = found
    return found


def _kept(idx: SiteIndex, kept: dict, key: tuple, axis: str, a: str, b: str) -> Comparison:
    """The comparison of `a` and `b`: read back if no variant of it changed
    since the last build (which made it), otherwise aggregated again with
    only the pairs that hold a changed variant diffed again (an edit
    reaches some of the variants, so most pairs of most comparisons are as
    they were).  The pairs are aggregated in the same order as a fresh
    `_compute`, so the result is the same whichever pairs were kept."""
    build, changed = _changed(idx, kept)
    old = kept.get(key)
    recs = _records(idx)
    if old is not None and changed is not None and old[0] == build - 1:
        _, found, pairs, variants, diffs = old
        if changed.isdisjoint(variants):
            kept[key] = (build, found, pairs, variants, diffs)
            return found
        diffs = [_pair(_rec(idx, recs, v), _rec(idx, recs, w)) if v in changed or w in changed else d
                 for (v, w), d in zip(pairs, diffs)]
    else:
        made = _pairs(idx, axis, a, b)
        pairs = [(rv.v, rw.v) for _, rv, rw in made]
        variants = frozenset(x for pair in pairs for x in pair)
        diffs = [_pair(rv, rw) for _, rv, rw in made]
    found = _aggregate(idx, axis, a, b, [(v, w, d) for (v, w), d in zip(pairs, diffs)])
    kept[key] = (build, found, pairs, variants, diffs)
    return found


def comparison(idx: SiteIndex, axis: str, value: str, other: str) -> Comparison:
    """Every pair of variants that differ only in `axis` (`value` vs
    `other`), aggregated; computed once per unordered pair of values -- and,
    when idx.memo holds KEPT, each pair diffed once until one of its variants changes."""
    a, b = sorted((value, other))
    key = ("compare", axis, a, b)
    found = idx.memo.get(key)
    if found is None:
        kept = idx.memo.get(KEPT)
        found = idx.memo[key] = _compute(idx, axis, a, b) if kept is None else _kept(idx, kept, key, axis, a, b)
    return found if found.value == value else found.flipped()


# ---------------------------------------------------------------------------
# Building blocks


def vlink(idx: SiteIndex, page: str, v: Variant, label: str | None = None) -> str:
    """A link to a variant: its page, or the explorer opened at it."""
    return link(idx.variant_href(page, v), h(label if label is not None else v.id), title=v.id)


def token_stats(idx: SiteIndex, page: str, vs: Sequence[Variant]) -> list[Cell]:
    """count, min, median, max cells; min and max link to their variant."""
    if not vs:
        return [Cell("0", "ps-r"), Cell("–", "ps-r"), Cell("–", "ps-r"), Cell("–", "ps-r")]
    totals = idx.totals
    ranked = sorted(vs, key=totals.__getitem__)  # stable: ties keep matrix order
    lo, hi = ranked[0], ranked[-1]
    mid = totals[ranked[(len(ranked) - 1) // 2]]  # the lower median
    return [
        Cell(num(len(vs)), "ps-r"),
        Cell(vlink(idx, page, lo, num(totals[lo])), "ps-r"),
        Cell(num(mid), "ps-r"),
        Cell(vlink(idx, page, hi, num(totals[hi])), "ps-r"),
    ]


STATS_HEADERS = [Cell("variants", "ps-r"), Cell("min", "ps-r"), Cell("median", "ps-r"), Cell("max", "ps-r")]


def by_axis_tables(idx: SiteIndex, page: str, vs: Sequence[Variant], axes: Sequence[str]) -> list[str]:
    """For each of `axes`: one row per value with its variants' token figures."""
    out: list[str] = []
    for a in axes:
        groups: dict[str, list[Variant]] = {x: [] for x in dict(idx.axes)[a]}
        for v in vs:
            groups[v.value(a)].append(v)
        rows = [[link(idx.href(page, idx.axis_page(a, x)), f"<code>{h(x)}</code>"), *token_stats(idx, page, group)]
                for x, group in groups.items()]
        out += [f"### By {h(a)}", "", table([h(a), *STATS_HEADERS], rows, cls="ps-nowrap ps-summary", searchable=False), ""]
    return out


def _kind(p: PartDiff) -> str:
    bits = []
    changed = p.differs - p.only_here - p.only_there
    if changed:
        bits.append(f"text differs in {changed:,}")
    if p.only_here:
        bits.append(f"+ only here in {p.only_here:,}")
    if p.only_there:
        bits.append(f"− only there in {p.only_there:,}")
    return "; ".join(bits)


def _range(lo: int, hi: int) -> str:
    return signed(lo) if lo == hi else f"{signed(lo)} to {signed(hi)}"


def comparison_block(idx: SiteIndex, page: str, cmp: Comparison, fragment_href) -> list[str]:
    """`value vs other`: pair count, total delta range, and one row per part
    that differs somewhere, with its delta range and the pair that shows it best."""
    other_axes = [a for a, _ in idx.axes if a != cmp.axis]
    if not cmp.pairs:
        return [block(para("No pairs: every counterpart is excluded by the matrix rules."), cls="ps-intro"), ""]
    lo, hi = min(cmp.deltas), max(cmp.deltas)
    mean = round(sum(cmp.deltas) / len(cmp.deltas))
    intro = (
        f"{_plural(cmp.pairs, 'pair')} with the same {h(', '.join(other_axes))}; total tokens differ by "
        f"{_range(lo, hi)}" + ("" if lo == hi else f" (mean {signed(mean)})")
        + (f"; {cmp.identical:,} pairs are identical" if cmp.identical else "")
        + "."
    )
    if cmp.largest is not None:
        v, w = cmp.largest
        intro += f" Largest difference: {vlink(idx, page, v)} vs {vlink(idx, page, w)}."
    out = [block(para(intro), cls="ps-intro"), ""]
    if not cmp.parts:
        return out
    rows = []
    for p in cmp.parts:
        name = "instructions" if p.name == INSTRUCTIONS else link(fragment_href(p.name), f"<code>{h(p.name)}</code>")
        example = "–" if p.example is None else f"{vlink(idx, page, p.example[0])} vs {vlink(idx, page, p.example[1])}"
        rows.append([
            name,
            Cell(f"{p.differs:,} / {cmp.pairs:,}", "ps-r"),
            h(_kind(p)),
            Cell(_range(p.lo, p.hi), "ps-r"),
            Cell(example, "ps-text"),
        ])
    headers = ["part", Cell("pairs where it differs", "ps-r"), "how", Cell("Δ tokens", "ps-r"), "largest difference"]
    out += [table(headers, rows, cls="ps-compare ps-summary", searchable=False), ""]
    return out


def value_counts(idx: SiteIndex, vs: Sequence[Variant]) -> dict[str, int]:
    """How many values each axis takes among `vs` (for describe_group)."""
    return {a: len({v.value(a) for v in vs}) for a, _ in idx.axes}


def describe_group(idx: SiteIndex, vs: Sequence[Variant], within: dict[str, int], limit: int = 6) -> str:
    """Which variants these are, as axis values: the axes on which `vs` takes
    fewer values than the variants it is part of do (`within`, from
    value_counts): `mode = plan; sandbox_mode ∈ a, b`."""
    parts = []
    for a, _ in idx.axes:
        mine = list(dict.fromkeys(v.value(a) for v in vs))
        if len(mine) >= within.get(a, 0):
            continue
        shown = ", ".join(f"<code>{h(x)}</code>" for x in mine[:limit]) + (f" and {len(mine) - limit} more" if len(mine) > limit else "")
        parts.append(f"{h(a)} {'=' if len(mine) == 1 else '∈'} {shown}")
    return "; ".join(parts) or "every variant that includes it"
