"""A history: what each release did to the assembled request of every variant.

`build_history(releases)` takes Releases in release order (releases.py: from
pipeline Results or lock files) and returns one `Step` per pair N−1 → N:

* **axes**: values that appear or disappear on each axis ("added in 0.150.0",
  "gone in 0.169.0"), with the agent's message when the newer release refuses
  a value it dropped -- reported, never an error;
* **variants** matched by their axis values (the axes both releases share):
  when an axis appears, each new variant is compared with the older variant
  that has the same values on the other axes; variants with no counterpart
  are listed as added or removed;
* **changes**: parts matched by fragment name, then -- for parts that exist
  on one side only -- as the base instructions (the field, or a section
  whose text is exactly them), by identical text, by start marker, or by
  very similar text, so a part that moved to another message or field (base instructions
  going from `instructions` into a developer message) is one *move*, not a
  removal and an addition.  Identical changes are grouped across variants and
  the variants they reach are summarised by axis (reach.py);
* **tokens**: Δ per matched variant (min, median, max, the largest
  increases), sections over the fragment budget, variants that now pass their
  auto-compaction limit.

Each step's comparison is a `change.Diff`, the one model of a change that
`diff`, `check` and the site's Changes page read: variants matched across
changed axes (`Diff.matched`, `Diff.axis_changes`), every distinct part
change a ChangeGroup (kind "renamed" for a part matched under another name
in the same place; `how` says how it was matched), every matched pair whose
request differs a VariantChange.  A `Step` holds that Diff with the two
Releases and what only a history reports.

Pure: Releases in, dataclasses out; formats are in report.py.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ...util import textdiff
from ..change import (INSTRUCTIONS, AxisChange, ChangeGroup, Diff, SectionChange, SectionState, VariantChange, VariantTotals, axis_changes,
                      crosses_headroom, status_map)
from ..change import match_variants as match_by_values
from ..lockfile import reordered
from ..reach import Reach, Universe, summarise
from ..conversation_lock import compare_entries
from .releases import Part, Release, VariantSnap

SIMILAR = 0.75
"""Text similarity above which a part that vanished and one that appeared are one part that moved (and changed)."""
MAX_SIMILAR_CHARS = 60_000
"""Longer texts are matched by hash and marker only (difflib is quadratic)."""
MAX_DIFF_CHARS = 200_000
KINDS = ("changed", "moved", "renamed", "added", "removed")


@dataclass(frozen=True)
class OverBudget:
    fragment: str
    budget: int
    max_tokens: int
    variants: int
    new: bool  # not over budget in the older release


@dataclass(frozen=True)
class Step:
    """Release N−1 → N: the Diff of the two (change.py's one model of a
    change), the releases it was built from, and what only a history
    reports: sections over the fragment budget, the reach of each change
    among the matched variants, the conversations that changed."""

    index: int  # 1-based
    base: Release
    head: Release
    diff: Diff
    over_budget: tuple[OverBudget, ...]
    reaches: Mapping[str, Reach]  # change group id -> the variants it reaches, summarised among the matched ones
    added_reach: Reach
    removed_reach: Reach
    threads: tuple[str, ...] = ()
    """One line per conversation thread whose requests changed (review/conversation_lock.py)."""

    @property
    def title(self) -> str:
        return f"{self.base.label} → {self.head.label}"

    @property
    def axes(self) -> tuple[AxisChange, ...]:
        return self.diff.axis_changes

    @property
    def changes(self) -> tuple[ChangeGroup, ...]:
        return self.diff.groups

    @property
    def added(self) -> tuple[str, ...]:
        """Head variants with no counterpart."""
        return tuple(a.id for a in self.diff.added)

    @property
    def removed(self) -> tuple[str, ...]:
        """Base variants with no counterpart."""
        return tuple(r.id for r in self.diff.removed)

    def reach(self, change: ChangeGroup) -> Reach:
        return self.reaches[change.id]

    def totals(self) -> list[tuple[str, str, int, int]]:
        """(head id, base id, total before, total after) of every matched pair, in match order."""
        out = []
        for bid, hid in self.diff.matched:
            c = self.diff.variant(hid)
            out.append((hid, bid, c.total_before, c.total_after) if c else (hid, bid, self.base.variants[bid].total, self.head.variants[hid].total))
        return out

    def delta_stats(self) -> tuple[int, float, int] | None:
        """(min, median, max) of the token Δ over matched variants; None when none matched."""
        if not self.diff.matched:
            return None
        ds = sorted([c.delta for c in self.diff.changed] + [0] * len(self.diff.unchanged))
        return ds[0], statistics.median(ds), ds[-1]

    def largest_increases(self, n: int = 10) -> list[VariantChange]:
        return self.diff.largest_increases(n)

    def headroom_crossings(self) -> list[tuple[str, int | None, int | None]]:
        """(head id, headroom before, after) of the matched variants that now go past auto-compaction, in match
        order (a model's limit can change while its request does not, so every pair is looked at)."""
        out = []
        for bid, hid in self.diff.matched:
            before, after = self.base.variants[bid].headroom, self.head.variants[hid].headroom
            if crosses_headroom(before, after):
                out.append((hid, before, after))
        return out


@dataclass(frozen=True)
class History:
    releases: tuple[Release, ...]
    steps: tuple[Step, ...]

    def first_seen(self) -> dict[tuple[str, str], str]:
        """(axis, value) -> label of the first release that has it."""
        out: dict[tuple[str, str], str] = {}
        for r in self.releases:
            for axis, values in r.axes:
                for value in values:
                    out.setdefault((axis, value), r.label)
        return out


# ---------------------------------------------------------------------------
# Building


def build_history(releases: Sequence[Release]) -> History:
    """One Step per consecutive pair (see the module docstring)."""
    releases = tuple(releases)
    steps = tuple(compare_releases(a, b, i) for i, (a, b) in enumerate(zip(releases, releases[1:]), 1))
    return History(releases, steps)


def match_variants(base: Release, head: Release) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """change.match_variants on two Releases: (pairs (base id, head id), unmatched head ids, unmatched base ids)."""
    return match_by_values(base.axis_names, {vid: v.values for vid, v in base.variants.items()},
                           head.axis_names, {vid: v.values for vid, v in head.variants.items()})


def compare_releases(base: Release, head: Release, index: int = 1) -> Step:
    pairs, added, removed = match_variants(base, head)
    # Changes happen between matched variants, so that is what their reach is relative to.
    head_u = Universe({hid: head.variants[hid].values for _, hid in pairs})
    base_u = Universe({bid: base.variants[bid].values for bid, _ in dict.fromkeys(pairs)})
    groups: dict[tuple, dict[str, Any]] = {}
    similar: dict[tuple[str, str], bool] = {}
    unchanged: list[str] = []
    raw: list[tuple[VariantSnap, VariantSnap, list[tuple[tuple, str, Part | None, Part | None]]]] = []
    for bid, hid in pairs:
        b, h = base.variants[bid], head.variants[hid]
        if b.sha == h.sha and b.total == h.total:
            unchanged.append(hid)
            continue
        parts = []
        for kind, pb, ph, how in _part_changes(b.parts, h.parts, similar):
            key = (kind, pb.name if pb else None, ph.name if ph else None, pb.sha if pb else None, ph.sha if ph else None,
                   pb.place if pb else None, ph.place if ph else None)
            g = groups.get(key)
            if g is None:
                g = groups[key] = {"kind": kind, "before": pb, "after": ph, "variants": [], "tokens": [], "how": how}
            g["variants"].append(hid if kind != "removed" else bid)
            g["tokens"].append((hid if kind != "removed" else bid, pb.tokens if pb else 0, ph.tokens if ph else 0))
            parts.append((key, kind, pb, ph))
        raw.append((b, h, parts))
    rank = {k: i for i, k in enumerate(KINDS)}
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]["variants"]), rank[kv[1]["kind"]], _gname(kv[1]),
                                                     kv[1]["before"].sha if kv[1]["before"] else "", kv[1]["after"].sha if kv[1]["after"] else ""))
    ids = {key: f"c{i}" for i, (key, _) in enumerate(ordered, 1)}
    changes = tuple(_group(ids[key], g, base.label, head.label) for key, g in ordered)
    states: dict[Part, SectionState] = {}
    changed = tuple(_variant_change(h.id, b, h, [(ids[key], kind, pb, ph) for key, kind, pb, ph in parts], states) for b, h, parts in raw)
    diff = Diff(
        base.label, head.label,
        added=tuple(VariantTotals(v, head.variants[v].total, None, head.variants[v].headroom) for v in added),
        removed=tuple(VariantTotals(v, base.variants[v].total, None, base.variants[v].headroom) for v in removed),
        changed=changed, unchanged=tuple(unchanged), groups=changes,
        _status=status_map(unchanged, added, removed, (c.id for c in changed)),
        axes=_axes(base, head), universe=tuple(sorted(set(base.variants) | set(head.variants))),
        base_kind="lock" if base.kind == "lock" else "result", head_kind="lock" if head.kind == "lock" else "result",
        matched=tuple(pairs), axis_changes=axis_changes(base.axes, head.axes, base.refused, head.refused),
    )
    return Step(
        index=index, base=base, head=head, diff=diff, over_budget=_over_budget(base, head),
        reaches={c.id: summarise(c.variants, base_u if c.kind == "removed" else head_u) for c in changes},
        added_reach=summarise(added, Universe({vid: v.values for vid, v in head.variants.items()})),
        removed_reach=summarise(removed, Universe({vid: v.values for vid, v in base.variants.items()})),
        threads=tuple(compare_entries(dict(base.threads), head.threads)) if base.threads or head.threads else (),
    )


def _group(gid: str, g: dict[str, Any], base_label: str, head_label: str) -> ChangeGroup:
    """One distinct change of one part as change.py's ChangeGroup (its diff headed by release and template)."""
    pb, ph = g["before"], g["after"]
    tb, ta = (pb.text if pb else None), (ph.text if ph else None)
    text_differs = (pb.sha if pb else None) != (ph.sha if ph else None)
    texts_known = (pb is None or tb is not None) and (ph is None or ta is not None)  # a lock side has none
    diff = _unified(tb, ta, pb.source if pb else "", ph.source if ph else "", base_label, head_label) if text_differs and texts_known else ""
    shown = ph or pb
    return ChangeGroup(
        id=gid, fragment=shown.name, kind=g["kind"], sources=tuple(sorted({p.source for p in (pb, ph) if p is not None and p.source})),
        before_text=tb, after_text=ta, variants=tuple(g["variants"]), tokens=tuple(g["tokens"]), diff=diff, section=shown.marker,
        fragment_before=pb.name if pb and ph and pb.name != ph.name else "", place_before=pb.place if pb else None,
        place_after=ph.place if ph else None, how=g["how"],
    )


def _state(part: Part, states: dict[Part, SectionState]) -> SectionState:
    """A Release's part as a SectionState (a release records no estimate, nor a message role apart from its place)."""
    found = states.get(part)
    if found is None:
        found = states[part] = SectionState(part.name, part.place, "", part.position, part.text, part.tokens, 0, part.source,
                                            label=part.marker, sha256=part.sha)
    return found


def _variant_change(hid: str, b: VariantSnap, h: VariantSnap, parts: list[tuple[str, str, Part | None, Part | None]],
                    states: dict[Part, SectionState]) -> VariantChange:
    """A matched pair whose request differs; a moved or renamed part is a SectionChange of that kind (as from a lock)."""
    instructions = None
    sections = []
    for gid, kind, pb, ph in parts:
        sc = SectionChange((ph or pb).name, kind, _state(pb, states) if pb else None,  # type: ignore[union-attr]
                           _state(ph, states) if ph else None, gid)
        if kind == "changed" and sc.fragment == INSTRUCTIONS and instructions is None:
            instructions = sc
        else:
            sections.append(sc)
    return VariantChange(hid, b.total, h.total, None, None, b.encoding, h.encoding, b.headroom, h.headroom, instructions, tuple(sections), ())


def _axes(base: Release, head: Release) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Head's axes, with values only the base has appended, then the axes only the base has."""
    ba = dict(base.axes)
    out = [(a, tuple(vs) + tuple(v for v in ba.get(a, ()) if v not in vs)) for a, vs in head.axes]
    return tuple(out + [(a, tuple(vs)) for a, vs in base.axes if a not in dict(head.axes)])


def _gname(g: Mapping[str, Any]) -> str:
    p = g["after"] or g["before"]
    return p.name


def _part_changes(before: Iterable[Part], after: Iterable[Part], similar: dict[tuple[str, str], bool]) -> list[tuple[str, Part | None, Part | None, str]]:
    """(kind, before part, after part, how) for one variant pair."""
    bp = {p.name: p for p in before}
    ap = {p.name: p for p in after}
    out: list[tuple[str, Part | None, Part | None, str]] = []
    common = [n for n in ap if n in bp]
    order_moved = _order_moves(bp, ap, common)
    for n in common:
        b, a = bp[n], ap[n]
        if b.place != a.place:
            out.append(("moved", b, a, "place"))
        elif n in order_moved:
            out.append(("moved", b, a, "order"))
        elif b.sha != a.sha:
            out.append(("changed", b, a, ""))
    gone = [bp[n] for n in bp if n not in ap]
    new = [ap[n] for n in ap if n not in bp]
    # Pair parts that exist on one side only: same text, then same marker, then similar text.
    for test, how in ((lambda x, y: x.is_base and y.is_base, "base instructions"),
                      (lambda x, y: x.sha == y.sha, "same text"),
                      (lambda x, y: bool(x.marker) and x.marker == y.marker, "same marker"),
                      (lambda x, y: _similar(x, y, similar), "similar text")):
        for b in list(gone):
            match = next((a for a in new if test(b, a)), None)
            if match is not None:
                kind = "renamed" if b.place == match.place else "moved"
                out.append((kind, b, match, how))
                gone.remove(b)
                new.remove(match)
    out += [("removed", b, None, "") for b in gone]
    out += [("added", None, a, "") for a in new]
    return out


def _order_moves(bp: dict[str, Part], ap: dict[str, Part], common: list[str]) -> set[str]:
    """Parts whose order among the parts of their place changed (as diff.py does for one pair)."""
    moved: set[str] = set()
    places = {bp[n].place for n in common if bp[n].place == ap[n].place}
    for place in places:
        seq_b = [n for n in sorted(common, key=lambda n: bp[n].position) if bp[n].place == place and ap[n].place == place]
        seq_a = sorted(seq_b, key=lambda n: ap[n].position)
        moved |= reordered(seq_b, seq_a)
    return moved


def _similar(b: Part, a: Part, cache: dict[tuple[str, str], bool]) -> bool:
    if b.text is None or a.text is None:
        return False
    key = (b.sha, a.sha)
    found = cache.get(key)
    if found is None:
        if len(b.text) > MAX_SIMILAR_CHARS or len(a.text) > MAX_SIMILAR_CHARS or not b.text.strip() or not a.text.strip():
            found = False
        else:
            # By lines for long texts (characters are quadratic in difflib), by characters for short ones;
            # budgeted like every diff (util/textdiff.py).
            x, y = (b.text, a.text) if len(b.text) + len(a.text) < 4000 else (b.text.splitlines(), a.text.splitlines())
            found = textdiff.similar(x, y, SIMILAR)
        cache[key] = found
    return found


def _unified(before: str | None, after: str | None, src_b: str, src_a: str, label_b: str, label_a: str) -> str:
    if (len(before or "") + len(after or "")) > MAX_DIFF_CHARS:
        return f"(texts of {len(before or '')} and {len(after or '')} characters: too long to diff here)\n"

    def lines(text: str | None) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    return textdiff.unified(lines(before), lines(after), f"{label_b}/{src_b}", f"{label_a}/{src_a}")


def _over_budget(base: Release, head: Release) -> tuple[OverBudget, ...]:
    budget = head.budget
    if not budget:
        return ()

    def over(r: Release, limit: int) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for v in r.variants.values():
            for p in v.parts:
                if p.name != INSTRUCTIONS and p.tokens > limit:
                    most, n = out.get(p.name, (0, 0))
                    out[p.name] = (max(most, p.tokens), n + 1)
        return out

    now, before = over(head, budget), over(base, budget)
    return tuple(OverBudget(f, budget, most, n, f not in before) for f, (most, n) in sorted(now.items()))


__all__ = ["History", "OverBudget", "Step", "build_history", "compare_releases", "match_variants"]
