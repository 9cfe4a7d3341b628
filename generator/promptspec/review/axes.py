"""Sets of variants described by axis, not listed by id.

"24 of 88 variants — mode = plan (all models, personalities, sandbox modes)"
tells a reviewer what a change reaches; 24 ids do not.  A set is described by
an axis rule when it is exactly the variants (of all that exist) whose value
on each constrained axis is in a small set; otherwise the ids are listed.
"""

from __future__ import annotations

from typing import Iterable, Sequence

Axes = Sequence[tuple[str, Sequence[str]]]


def axis_plural(axis: str) -> str:
    name = axis.replace("_", " ")
    if name.endswith("y") and not name.endswith(("ay", "ey", "oy", "uy")):
        return name[:-1] + "ies"
    return name + ("es" if name.endswith("s") else "s")


def split_id(vid: str, n: int) -> tuple[str, ...] | None:
    parts = tuple(vid.split("/"))
    return parts if len(parts) == n else None


def axis_rule(subset: Iterable[str], universe: Iterable[str], axes: Axes) -> list[tuple[str, tuple[str, ...]]] | None:
    """[(axis, values)] such that `subset` is exactly the variants of `universe`
    with those values (unconstrained axes omitted); None when no rule fits."""
    names = [a for a, _ in axes]
    n = len(names)
    want = {p for p in (split_id(v, n) for v in subset) if p is not None}
    everything = [p for p in (split_id(v, n) for v in universe) if p is not None]
    if not want or len(want) != len(set(subset)):
        return None
    rule = []
    for i, axis in enumerate(names):
        used = {p[i] for p in want}
        present = {p[i] for p in everything}
        if used != present:
            order = {value: k for k, value in enumerate(dict(axes)[axis])}
            rule.append((axis, tuple(sorted(used, key=lambda v: (order.get(v, len(order)), v)))))
    allowed = [set(values) for _, values in rule]
    index = {axis: i for i, axis in enumerate(names)}
    matched = {p for p in everything if all(p[index[a]] in ok for (a, _), ok in zip(rule, allowed))}
    return rule if matched == want else None


def describe(subset: Sequence[str], universe: Sequence[str], axes: Axes, *, max_values: int = 4, max_ids: int = 8) -> str:
    """One line for a set of variants (see the module docstring)."""
    count = f"{len(subset)} of {len(universe)} variant{'s' if len(universe) != 1 else ''}"
    if not subset:
        return f"no variants (of {len(universe)})"
    rule = axis_rule(subset, universe, axes)
    if rule is not None and all(len(values) <= max_values for _, values in rule):
        if not rule:
            return f"all {len(universe)} variants"
        parts = [f"{axis} = {values[0]}" if len(values) == 1 else f"{axis} ∈ {{{', '.join(values)}}}" for axis, values in rule]
        free = [axis_plural(a) for a, _ in axes if a not in dict(rule)]
        tail = f" (all {', '.join(free)})" if free else ""
        return f"{count} — {', '.join(parts)}{tail}"
    shown = list(subset[:max_ids])
    more = len(subset) - len(shown)
    return f"{count}: {', '.join(shown)}" + (f", … and {more} more" if more > 0 else "")
