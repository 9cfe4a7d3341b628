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

Pure: Releases in, dataclasses out; formats are in history_report.py.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ...util import textdiff
from ..change import INSTRUCTIONS, crosses_headroom, largest_increases
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
class AxisChange:
    axis: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]  # (value, message): values the newer release refuses and the older did not
    axis_added: bool = False
    axis_removed: bool = False


@dataclass(frozen=True)
class Change:
    """One distinct change of one part, and every variant it reaches."""

    id: str  # "c1", "c2" ... within its step
    kind: str  # changed | moved | renamed | added | removed
    name_before: str | None
    name_after: str | None
    place_before: str | None
    place_after: str | None
    text_before: str | None
    text_after: str | None
    variants: tuple[str, ...]  # head-side ids (base-side for removed)
    tokens: tuple[tuple[str, int, int], ...]  # (variant, before, after)
    reach: Reach
    diff: str  # unified diff ("" when the text is the same or not known)
    how: str = ""  # for moves: "place", "order", "base instructions", "same text", "same marker", "similar text"

    @property
    def name(self) -> str:
        return self.name_after or self.name_before or ""

    @property
    def delta_range(self) -> tuple[int, int]:
        deltas = [a - b for _, b, a in self.tokens] or [0]
        return min(deltas), max(deltas)


@dataclass(frozen=True)
class VariantDelta:
    id: str  # head side
    base_id: str
    before: int
    after: int
    headroom_before: int | None
    headroom_after: int | None

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True)
class OverBudget:
    fragment: str
    budget: int
    max_tokens: int
    variants: int
    new: bool  # not over budget in the older release


@dataclass(frozen=True)
class Step:
    index: int  # 1-based
    base: Release
    head: Release
    axes: tuple[AxisChange, ...]
    added: tuple[str, ...]  # head variants with no counterpart
    removed: tuple[str, ...]  # base variants with no counterpart
    deltas: tuple[VariantDelta, ...]  # every matched pair
    unchanged: int  # matched pairs with the same request
    changes: tuple[Change, ...]
    over_budget: tuple[OverBudget, ...]
    added_reach: Reach
    removed_reach: Reach
    threads: tuple[str, ...] = ()
    """One line per conversation thread whose requests changed (review/conversation_lock.py)."""

    @property
    def title(self) -> str:
        return f"{self.base.label} → {self.head.label}"

    @property
    def changed(self) -> tuple[VariantDelta, ...]:
        return tuple(d for d in self.deltas if d.delta != 0 or self._differs(d))

    def _differs(self, d: VariantDelta) -> bool:
        return self.base.variants[d.base_id].sha != self.head.variants[d.id].sha

    def delta_stats(self) -> tuple[int, float, int] | None:
        """(min, median, max) of the token Δ over matched variants; None when none matched."""
        if not self.deltas:
            return None
        ds = sorted(d.delta for d in self.deltas)
        return ds[0], statistics.median(ds), ds[-1]

    def largest_increases(self, n: int = 10) -> list[VariantDelta]:
        return largest_increases(self.deltas, n)

    def headroom_crossings(self) -> list[VariantDelta]:
        return [d for d in self.deltas if crosses_headroom(d.headroom_before, d.headroom_after)]


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


def axis_changes(base: Release, head: Release) -> tuple[AxisChange, ...]:
    out = []
    ba, ha = dict(base.axes), dict(head.axes)
    for axis in list(dict.fromkeys([*ba, *ha])):
        before, after = ba.get(axis, ()), ha.get(axis, ())
        added = tuple(v for v in after if v not in before)
        removed = tuple(v for v in before if v not in after)
        refused_now = head.refused.get(axis, {})
        refused_before = base.refused.get(axis, {})
        refused = tuple((v, refused_now[v]) for v in refused_now if v not in refused_before)
        if added or removed or refused or (axis in ba) != (axis in ha):
            out.append(AxisChange(axis, added, removed, refused, axis not in ba, axis not in ha))
    return tuple(out)


def match_variants(base: Release, head: Release) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(pairs (base id, head id), head ids with no counterpart, base ids with no counterpart).

    The key is a variant's values on the axes both releases have.  One base
    variant may pair with several head variants (an axis appeared); several
    base variants for one key (an axis disappeared) pair with nothing."""
    shared = [a for a in base.axis_names if a in head.axis_names]
    if tuple(shared) == base.axis_names == head.axis_names:
        pairs = [(vid, vid) for vid in head.variants if vid in base.variants]
        return pairs, [v for v in head.variants if v not in base.variants], [v for v in base.variants if v not in head.variants]

    def key(v: VariantSnap) -> tuple[str | None, ...]:
        values = dict(v.values)
        return tuple(values.get(a) for a in shared)

    by_key: dict[tuple, list[str]] = {}
    for vid, v in base.variants.items():
        by_key.setdefault(key(v), []).append(vid)
    pairs, added = [], []
    used: set[str] = set()
    for vid, v in head.variants.items():
        k = key(v)
        candidates = by_key.get(k, [])
        if len(candidates) == 1:
            pairs.append((candidates[0], vid))
            used.add(candidates[0])
        else:
            added.append(vid)
    removed = [vid for vid in base.variants if vid not in used]
    return pairs, added, removed


def compare_releases(base: Release, head: Release, index: int = 1) -> Step:
    pairs, added, removed = match_variants(base, head)
    # Changes happen between matched variants, so that is what their reach is relative to.
    head_u = Universe({hid: head.variants[hid].values for _, hid in pairs})
    base_u = Universe({bid: base.variants[bid].values for bid, _ in dict.fromkeys(pairs)})
    groups: dict[tuple, dict[str, Any]] = {}
    similar: dict[tuple[str, str], bool] = {}
    deltas, unchanged = [], 0
    for bid, hid in pairs:
        b, h = base.variants[bid], head.variants[hid]
        deltas.append(VariantDelta(hid, bid, b.total, h.total, b.headroom, h.headroom))
        if b.sha == h.sha and b.total == h.total:
            unchanged += 1
            continue
        for kind, pb, ph, how in _part_changes(b.parts, h.parts, similar):
            key = (kind, pb.name if pb else None, ph.name if ph else None, pb.sha if pb else None, ph.sha if ph else None,
                   pb.place if pb else None, ph.place if ph else None)
            g = groups.get(key)
            if g is None:
                g = groups[key] = {"kind": kind, "before": pb, "after": ph, "variants": [], "tokens": [], "how": how}
            g["variants"].append(hid if kind != "removed" else bid)
            g["tokens"].append((hid if kind != "removed" else bid, pb.tokens if pb else 0, ph.tokens if ph else 0))
    rank = {k: i for i, k in enumerate(KINDS)}
    ordered = sorted(groups.values(), key=lambda g: (-len(g["variants"]), rank[g["kind"]], _gname(g), g["before"].sha if g["before"] else "",
                                                     g["after"].sha if g["after"] else ""))
    changes = []
    for i, g in enumerate(ordered, 1):
        pb, ph = g["before"], g["after"]
        tb, ta = (pb.text if pb else None), (ph.text if ph else None)
        text_differs = (pb.sha if pb else None) != (ph.sha if ph else None)
        texts_known = (pb is None or tb is not None) and (ph is None or ta is not None)  # a lock side has none
        diff = _unified(tb, ta, pb.source if pb else "", ph.source if ph else "", base.label, head.label) if text_differs and texts_known else ""
        universe = base_u if g["kind"] == "removed" else head_u
        changes.append(Change(
            id=f"c{i}", kind=g["kind"], name_before=pb.name if pb else None, name_after=ph.name if ph else None,
            place_before=pb.place if pb else None, place_after=ph.place if ph else None, text_before=tb, text_after=ta,
            variants=tuple(g["variants"]), tokens=tuple(g["tokens"]), reach=summarise(g["variants"], universe), diff=diff, how=g["how"],
        ))
    return Step(
        index=index, base=base, head=head, axes=axis_changes(base, head), added=tuple(added), removed=tuple(removed),
        deltas=tuple(deltas), unchanged=unchanged, changes=tuple(changes), over_budget=_over_budget(base, head),
        added_reach=summarise(added, Universe({vid: v.values for vid, v in head.variants.items()})),
        removed_reach=summarise(removed, Universe({vid: v.values for vid, v in base.variants.items()})),
        threads=tuple(compare_entries(dict(base.threads), head.threads)) if base.threads or head.threads else (),
    )


def _gname(g: dict[str, Any]) -> str:
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


__all__ = ["AxisChange", "Change", "History", "OverBudget", "Step", "VariantDelta", "axis_changes", "build_history",
           "compare_releases", "match_variants"]
