"""Which variants a change reaches, said by axis rather than by id.

"mode = plan (all models)" reads at a glance; forty variant ids do not.
`summarise(ids, universe)` covers the set with a few axis rules -- each a
value (or a few values) on one or two axes, whose variants all lie in the set
-- and falls back to ids only for variants no rule fits.  Rules are chosen
greedily (largest first, ties in axis order), so the result is deterministic.
A set that is exactly the variants whose values lie in a set per axis is one
rule.  `describe(ids, universe_ids, axes)` is the counted line of `diff` and
`check` ("24 of 88 variants — mode = plan (all models)"), for sets of
variant ids split by the spec's axes; history steps use `summarise` on the
releases' own axis values.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

Axes = Sequence[tuple[str, Sequence[str]]]
"""A spec's axes: (name, values in the spec's order)."""

MAX_RULES = 4
"""More rules than this read worse than a count with ids."""
MAX_IDS = 8


@dataclass(frozen=True)
class Reach:
    """A set of variants as rules (axis -> values) plus ids no rule covers."""

    rules: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
    ids: tuple[str, ...]
    count: int
    total: int
    free_axes: tuple[str, ...]  # the universe's axes with more than one value
    values: Mapping[str, Sequence[str]] = field(default_factory=dict, compare=False, repr=False)  # every value per axis

    @property
    def everything(self) -> bool:
        return self.count == self.total and self.count > 0

    def text(self) -> str:
        """One line: `all 88 variants`, `mode = plan (all models)`, `3 variants: a, b, c`."""
        if self.count == 0:
            return "no variants"
        if self.everything:
            return f"all {self.total} variants" if self.total != 1 else "the only variant"
        parts = [_rule_text(rule, self.free_axes, self.values) for rule in self.rules]
        if self.ids:
            shown = ", ".join(self.ids[:MAX_IDS]) + (f", … ({len(self.ids) - MAX_IDS} more)" if len(self.ids) > MAX_IDS else "")
            parts.append(f"{len(self.ids)} variant{'s' if len(self.ids) != 1 else ''}: {shown}" if parts or len(self.ids) > 1 else shown)
        return "; ".join(parts)

    @property
    def by_axes(self) -> bool:
        """Said by axis rules alone (no id listed)."""
        return self.count > 0 and not self.ids

    def counted(self) -> str:
        """`text()` with the count: `24 of 88 variants — mode = plan (all models)`,
        `2 of 12 variants: a, b`, `all 88 variants`, `no variants (of 88)`."""
        if self.count == 0:
            return f"no variants (of {self.total})"
        if self.everything:
            return f"all {self.total} variants" if self.total != 1 else "the only variant"
        count = f"{self.count} of {self.total} variant{'s' if self.total != 1 else ''}"
        if not self.rules:
            shown = ", ".join(self.ids[:MAX_IDS]) + (f", … and {len(self.ids) - MAX_IDS} more" if len(self.ids) > MAX_IDS else "")
            return f"{count}: {shown}"
        return f"{count} — {self.text()}"

    def to_data(self) -> dict:
        return {
            "count": self.count,
            "of": self.total,
            "rules": [{axis: list(values) for axis, values in rule} for rule in self.rules],
            "ids": list(self.ids),
            "text": self.text(),
        }


_PLURAL = {"model": "models", "personality": "personalities", "mode": "modes"}


def _rule_text(rule: tuple[tuple[str, tuple[str, ...]], ...], free_axes: Sequence[str],
               all_values: Mapping[str, Sequence[str]] | None = None) -> str:
    terms = []
    for axis, values in rule:
        others = [v for v in all_values.get(axis, ()) if v not in values] if all_values else []
        if len(values) > 2 and others and len(others) < len(values):
            terms.append(f"{axis} ≠ {others[0]}" if len(others) == 1 else f"{axis} ∉ {{{', '.join(others)}}}")
        else:
            terms.append(f"{axis} = {values[0]}" if len(values) == 1 else f"{axis} ∈ {{{', '.join(values)}}}")
    text = ", ".join(terms)
    constrained = {a for a, _ in rule}
    if "model" in free_axes and "model" not in constrained:
        text += " (all models)"
    return text


class Universe:
    """The variants a summary is relative to, with the cells (one value on one
    or two axes) precomputed: a history summarises hundreds of changes against
    the same release."""

    def __init__(self, universe: Mapping[str, tuple[tuple[str, str], ...]], order: Axes = ()):
        """`order`: the axes' values in the spec's order (default: as they come)."""
        self.ids = universe
        self.axes: list[str] = []
        self.values: dict[str, list[str]] = {}
        by_value: dict[tuple[str, str], set[str]] = {}
        for vid, vals in universe.items():
            for axis, value in vals:
                if axis not in self.values:
                    self.axes.append(axis)
                    self.values[axis] = []
                if value not in self.values[axis]:
                    self.values[axis].append(value)
                by_value.setdefault((axis, value), set()).add(vid)
        for axis, values in order:
            if axis in self.values:
                rank = {v: i for i, v in enumerate(values)}
                self.values[axis].sort(key=lambda v: (rank.get(v, len(rank)), v))
        self.free = tuple(a for a in self.axes if len(self.values[a]) > 1)
        self.rows = [dict(vals) for vals in universe.values()]
        self.singles = [(((a, v),), frozenset(by_value[(a, v)])) for a in self.free for v in self.values[a]]
        self.pairs = []
        for a, b in itertools.combinations(self.free, 2):
            for va in self.values[a]:
                for vb in self.values[b]:
                    members = by_value[(a, va)] & by_value[(b, vb)]
                    if members:
                        self.pairs.append((((a, va), (b, vb)), frozenset(members)))


def summarise(ids: Iterable[str], universe: "Mapping[str, tuple[tuple[str, str], ...]] | Universe") -> Reach:
    """Summarise `ids` (variant ids) within `universe` (id -> its (axis, value) pairs, or a Universe)."""
    u = universe if isinstance(universe, Universe) else Universe(universe)
    chosen = [i for i in dict.fromkeys(ids) if i in u.ids]
    target = set(chosen)
    total = len(u.ids)
    if not target or len(target) == total:
        return Reach((), (), len(target), total, u.free, u.values)
    product = _as_product(target, u)
    if product is not None:
        return Reach((product,), (), len(target), total, u.free, u.values)
    cells = [c for c in u.singles if c[1] <= target]
    singles = [m for _, m in cells]
    cells += [c for c in u.pairs if c[1] <= target and not any(c[1] <= s for s in singles)]
    # Greedy cover.
    left = set(target)
    picked = []
    while left:
        best = max(cells, key=lambda c: len(c[1] & left), default=None)
        if best is None or not (best[1] & left):
            break
        picked.append(best)
        left -= best[1]
    rules = _merge([key for key, _ in picked], u.values)
    ids_left = tuple(i for i in chosen if i in left)
    if len(rules) > MAX_RULES:
        return Reach((), tuple(chosen), len(target), total, u.free, u.values)
    return Reach(tuple(rules), ids_left, len(target), total, u.free, u.values)


def _as_product(target: set[str], u: Universe) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """One rule when the set is exactly the variants whose values lie in a set per axis
    (e.g. model ∈ {a, b}, sandbox = x, approval = y), else None."""
    seen: dict[str, set[str]] = {a: set() for a in u.free}
    for vid in target:
        for axis, value in u.ids[vid]:
            if axis in seen:
                seen[axis].add(value)
    constrained = [(a, vals) for a, vals in seen.items() if len(vals) < len(u.values[a])]
    if not constrained:
        return None
    rows = u.rows

    def count(rule: list[tuple[str, set[str]]]) -> int:
        return sum(1 for r in rows if all(r.get(a) in allowed for a, allowed in rule))

    if count(constrained) != len(target):
        return None
    # Drop constraints the matrix makes redundant (pair programming excluded for one model: "mode = pair_programming" is enough).
    for item in sorted(constrained, key=lambda c: -len(c[1])):
        rest = [c for c in constrained if c is not item]
        if rest and count(rest) == len(target):
            constrained = rest
    return tuple((a, tuple(v for v in u.values[a] if v in vals)) for a, vals in constrained)


def _merge(keys: list[tuple[tuple[str, str], ...]], values: Mapping[str, list[str]]) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    """Cells that differ only in the value of one axis become one rule with a value list
    (trying each axis as the one that varies, and keeping the grouping with fewest rules)."""
    best: list | None = None
    width = max((len(k) for k in keys), default=0)
    for vary in range(width):
        groups: dict[tuple, list[str]] = {}
        order: list[tuple] = []
        for key in keys:
            i = min(vary, len(key) - 1)
            fixed = key[:i] + key[i + 1:]
            gkey = (tuple(a for a, _ in key), i, fixed)
            if gkey not in groups:
                groups[gkey] = []
                order.append(gkey)
            groups[gkey].append(key[i][1])
        rules = []
        for gkey in order:
            axes_of, i, fixed = gkey
            axis = axes_of[i]
            vals = tuple(sorted(groups[gkey], key=values[axis].index))
            rule = [(a, (v,)) for a, v in fixed]
            rule.insert(i, (axis, vals))
            rules.append(tuple(rule))
        if best is None or len(rules) < len(best):
            best = rules
    return best or []


def summarise_ids(ids: Sequence[str], universe: Sequence[str], axes: Axes) -> Reach:
    """`summarise` for variant ids whose parts (split on "/") are the values
    of `axes`; ids of another shape count in the total, listed by id."""
    u = _id_universe(tuple(universe), tuple((a, tuple(v)) for a, v in axes))
    reach = summarise(ids, u)
    if len(u.ids) == len(universe):
        return reach
    chosen = list(dict.fromkeys(ids))
    odd = tuple(i for i in chosen if i not in u.ids)
    return Reach(reach.rules, reach.ids + odd, len(chosen), len(universe), u.free, u.values)


def describe(ids: Sequence[str], universe: Sequence[str], axes: Axes) -> str:
    """One counted line for a set of variant ids (Reach.counted)."""
    return summarise_ids(ids, universe, axes).counted()


@functools.lru_cache(maxsize=8)
def _id_universe(universe: tuple[str, ...], axes: tuple[tuple[str, tuple[str, ...]], ...]) -> Universe:
    """Kept for the few universes of one report (a diff describes each change against the same one)."""
    names = [a for a, _ in axes]
    split = {vid: tuple(zip(names, parts)) for vid in universe if len(parts := vid.split("/")) == len(names)}
    return Universe(split, order=axes)


__all__ = ["Axes", "Reach", "Universe", "describe", "summarise", "summarise_ids"]
