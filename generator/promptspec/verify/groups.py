"""The variants that differ from Codex the same way, as one group said by axis.

A changed tool description makes every variant differ, and a changed
permissions text the variants of one approval policy: listed per variant, that
is hundreds of copies of the same diff.  Grouped by what differs (the
difference's stable name, "tool update_plan", "permissions") and then by the
diff itself, it is two entries, each with the variants it reaches said the way
`diff`, `check` and `history` say them (review/reach.py):
"permissions: 216 of 864 variants — approval_policy = on-request (all models)".

Works on the stored JSON form of a report (dicts), so the command line and the
site's Conformance page group the same way from the same data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..review.reach import Reach, Universe, summarise


@dataclass(frozen=True)
class DiffGroup:
    """One distinct diff of a part, and the variants that show exactly it."""

    diff: str
    where: tuple[str, ...]  # the location labels it was found at ("input[0] developer part 1 (permissions)")
    ids: tuple[str, ...]
    reach: Reach


@dataclass(frozen=True)
class PartGroup:
    """Everything that differs under one name, over all the variants it differs in."""

    name: str
    ids: tuple[str, ...]
    reach: Reach
    diffs: tuple[DiffGroup, ...]  # most variants first

    def headline(self) -> str:
        """`tool update_plan: all 96 compared variants`,
        `permissions: 24 of 96 variants — approval_policy = on-request (all models)`."""
        r = self.reach
        if r.everything:
            return f"{self.name}: all {r.total} compared variants" if r.total != 1 else f"{self.name}: the only compared variant"
        return f"{self.name}: {r.counted()}"


def differences_of(entry: Mapping[str, Any]) -> list[dict[str, str]]:
    """A stored variant's differences; a version 1 report kept only the first."""
    found = entry.get("differences")
    if isinstance(found, list) and found:
        return [{"name": str(d.get("name") or d.get("part") or ""), "part": str(d.get("part") or ""),
                 "diff": str(d.get("diff") or "")} for d in found if isinstance(d, dict)]
    if entry.get("identical") or not entry.get("part"):
        return []
    from ..oracle.compare import part_name_of

    part = str(entry["part"])
    return [{"name": part_name_of(part), "part": part, "diff": str(entry.get("diff") or "")}]


def universe_of(variants: Sequence[Mapping[str, Any]]) -> Universe:
    """The compared variants, by their Codex configuration (axis -> value)."""
    return Universe({str(v["id"]): tuple((str(a), str(x)) for a, x in (v.get("config") or {}).items())
                     for v in variants})


def group(variants: Sequence[Mapping[str, Any]]) -> list[PartGroup]:
    """The differences of `variants` (stored report entries), one group per name,
    largest first (ties in the order first met)."""
    u = universe_of(variants)
    by_name: dict[str, dict[str, list]] = {}
    for v in variants:
        vid = str(v["id"])
        for d in differences_of(v):
            diffs = by_name.setdefault(d["name"], {})
            slot = diffs.setdefault(d["diff"], [[], []])
            if vid not in slot[0]:
                slot[0].append(vid)
            if d["part"] not in slot[1]:
                slot[1].append(d["part"])
    out = []
    for name, diffs in by_name.items():
        ids = tuple(dict.fromkeys(i for slot in diffs.values() for i in slot[0]))
        dgs = [DiffGroup(diff, tuple(slot[1]), tuple(slot[0]), summarise(slot[0], u)) for diff, slot in diffs.items()]
        dgs.sort(key=lambda g: -len(g.ids))
        out.append(PartGroup(name, ids, summarise(ids, u), tuple(dgs)))
    out.sort(key=lambda g: -len(g.ids))
    return out


__all__ = ["DiffGroup", "PartGroup", "differences_of", "group", "universe_of"]
