"""Review: what a spec change does to every variant.

`compare(base, head)` takes two pipeline Results and returns a `Diff`: which
variants were added, removed or changed, and per changed variant which
sections changed (matched by fragment name), moved, appeared or disappeared,
with token counts on both sides.  Identical section changes are grouped -- the
same fragment going from the same old text to the same new text is *one*
change listing the variants it touched -- so one edit that reaches 40 variants
reads as one change.

Everything here is pure (Results in, dataclasses out); reading git and files
lives in gitspec.py, the formats a reviewer reads in report.py.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from . import lockfile
from ..assemble.export import dumps as pretty_json
from .lockfile import GROUP_ORDER, INSTRUCTIONS, TOOL_PREFIX, LockDiff, request_hash, section_group

PARAMETERS = "(parameters)"
"""The body's request parameters (reasoning, tool_choice, ...), compared as one part."""

# ---------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class SectionState:
    """One section (or the base instructions) on one side."""

    fragment: str  # fragment name, or INSTRUCTIONS
    group: str  # developer | separate_developer | user | instructions
    role: str
    position: int  # 1-based within its group, in send order (0 for instructions)
    text: str
    tokens: int
    estimate: int
    source: str  # the file it came from


@dataclass(frozen=True)
class SectionChange:
    """A section whose text changed, or which appeared/disappeared, in one variant."""

    fragment: str
    kind: str  # "changed" | "added" | "removed"
    before: SectionState | None
    after: SectionState | None
    group_id: str = ""  # the ChangeGroup holding its diff

    @property
    def tokens_before(self) -> int:
        return self.before.tokens if self.before else 0

    @property
    def tokens_after(self) -> int:
        return self.after.tokens if self.after else 0

    @property
    def delta(self) -> int:
        return self.tokens_after - self.tokens_before


@dataclass(frozen=True)
class Move:
    """A section present on both sides whose place in the send order changed."""

    fragment: str
    group_before: str
    group_after: str
    position_before: int
    position_after: int
    order_before: tuple[str, ...]  # the fragments of its group, base side
    order_after: tuple[str, ...]
    group_id: str = ""


@dataclass(frozen=True)
class VariantTotals:
    """An added or removed variant: just its figures."""

    id: str
    total: int
    estimate: int
    headroom: int | None


def percent_change(before: int, after: int) -> float | None:
    """Growth in percent of `before`; None when there was nothing before."""
    return None if not before else 100.0 * (after - before) / before


def crosses_headroom(before: int | None, after: int | None) -> bool:
    """True when a variant fit under the auto-compaction limit before and no longer does."""
    return before is not None and after is not None and before >= 0 > after


def largest_increases(changed: Iterable[Any], n: int = 10) -> list[Any]:
    """The `n` changed variants (anything with `.id` and `.delta`) that grew most, ties by id."""
    return sorted((c for c in changed if c.delta > 0), key=lambda c: (-c.delta, c.id))[:n]


@dataclass(frozen=True)
class VariantChange:
    id: str
    total_before: int
    total_after: int
    estimate_before: int
    estimate_after: int
    encoding_before: str
    encoding_after: str
    headroom_before: int | None
    headroom_after: int | None
    instructions: SectionChange | None
    sections: tuple[SectionChange, ...]
    moves: tuple[Move, ...]

    @property
    def delta(self) -> int:
        return self.total_after - self.total_before

    @property
    def percent(self) -> float | None:
        return percent_change(self.total_before, self.total_after)

    @property
    def crosses_headroom(self) -> bool:
        """True when the variant fit under the auto-compaction limit before and no longer does."""
        return crosses_headroom(self.headroom_before, self.headroom_after)

    @property
    def all_changes(self) -> tuple[SectionChange, ...]:
        return ((self.instructions,) if self.instructions else ()) + self.sections


@dataclass(frozen=True)
class ChangeGroup:
    """One distinct change, and every variant it appears in.

    For text changes the key is (fragment, before text, after text); for moves
    it is (fragment, group before, group after)."""

    id: str  # "c1", "c2", ... in report order
    fragment: str
    kind: str  # "changed" | "added" | "removed" | "moved"
    sources: tuple[str, ...]  # files on either side
    before_text: str | None
    after_text: str | None
    variants: tuple[str, ...]
    tokens: tuple[tuple[str, int, int], ...]  # (variant, before, after) — counts depend on each model's encoding
    diff: str  # unified diff of the text ("" for moves)
    moves: tuple[Move, ...] = ()

    @property
    def delta_range(self) -> tuple[int, int]:
        deltas = [after - before for _, before, after in self.tokens] or [0]
        return min(deltas), max(deltas)

    @property
    def label(self) -> str:
        return part_label(self.fragment)


def part_label(name: str) -> str:
    """How a report names a part: base instructions, a fragment, a tool, the parameters."""
    if name == INSTRUCTIONS:
        return "base instructions"
    if name == PARAMETERS:
        return "request parameters"
    if name.startswith(TOOL_PREFIX):
        return f"tool {name[len(TOOL_PREFIX):]}"
    return f"fragment {name}"


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # "added" | "removed" | "modified"


@dataclass(frozen=True)
class Diff:
    """Everything a review needs; see the module docstring."""

    base_label: str
    head_label: str
    added: tuple[VariantTotals, ...]
    removed: tuple[VariantTotals, ...]
    changed: tuple[VariantChange, ...]
    unchanged: tuple[str, ...]
    groups: tuple[ChangeGroup, ...]
    files: tuple[FileChange, ...] = ()
    budget: int | None = None
    _status: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def status_of(self, variant_id: str) -> str:
        """"added" | "removed" | "changed" | "unchanged" | "unknown": for a per-variant badge."""
        return self._status.get(variant_id, "unknown")

    def variant(self, variant_id: str) -> VariantChange | None:
        return next((c for c in self.changed if c.id == variant_id), None)

    def group(self, group_id: str) -> ChangeGroup:
        return next(g for g in self.groups if g.id == group_id)

    def largest_increases(self, n: int = 10) -> list[VariantChange]:
        return largest_increases(self.changed, n)

    def headroom_crossings(self) -> list[tuple[str, int | None, int]]:
        """(variant, headroom before or None if added, headroom after) for variants that now go past auto-compaction."""
        out = [(c.id, c.headroom_before, c.headroom_after) for c in self.changed if c.crosses_headroom]
        out += [(a.id, None, a.headroom) for a in self.added if a.headroom is not None and a.headroom < 0]
        return sorted(out, key=lambda r: r[0])

    def budget_crossings(self) -> list[tuple[str, int | None, int]]:
        """(variant, total before or None, total after) for variants now over --budget that were not before."""
        if self.budget is None:
            return []
        out = [(c.id, c.total_before, c.total_after) for c in self.changed if c.total_before <= self.budget < c.total_after]
        out += [(a.id, None, a.total) for a in self.added if a.total > self.budget]
        return sorted(out, key=lambda r: r[0])

    def files_to_variants(self) -> dict[str, tuple[str, ...]]:
        """Changed file -> variants whose changed sections came from it (by section source)."""
        out: dict[str, set[str]] = {}
        for g in self.groups:
            for src in g.sources:
                out.setdefault(src.split("#", 1)[0], set()).update(g.variants)
        return {f.path: tuple(sorted(out.get(f.path, ()))) for f in self.files}

    def to_data(self) -> dict[str, Any]:
        """JSON-ready, deterministic: the `--format json` document."""
        return {
            "base": self.base_label,
            "head": self.head_label,
            "counts": {"changed": len(self.changed), "added": len(self.added), "removed": len(self.removed), "unchanged": len(self.unchanged)},
            "changes": [_group_data(g) for g in self.groups],
            "variants": {
                "changed": [_variant_data(c) for c in self.changed],
                "added": [_totals_data(a) for a in self.added],
                "removed": [_totals_data(r) for r in self.removed],
                "unchanged": list(self.unchanged),
            },
            "files": [{"path": f.path, "status": f.status, "variants": list(self.files_to_variants()[f.path])} for f in self.files],
            "largest_increases": [{"id": c.id, "before": c.total_before, "after": c.total_after, "delta": c.delta} for c in self.largest_increases()],
            "headroom_crossings": [{"id": v, "headroom_before": b, "headroom_after": a} for v, b, a in self.headroom_crossings()],
            "budget": self.budget,
            "budget_crossings": [{"id": v, "before": b, "after": a} for v, b, a in self.budget_crossings()],
        }


# ---------------------------------------------------------------------------
# Comparing


def _sides(result) -> dict[str, tuple[Any, str, dict[str, SectionState], SectionState, dict[str, tuple[str, ...]]]]:
    """variant id -> (measure, payload hash, sections by fragment, instructions, group orders)."""
    out = {}
    for m in result.measures:
        req = m.request
        sections: dict[str, SectionState] = {}
        orders: dict[str, list[str]] = {}
        for (_, message, section), (_, _, tokens, estimate) in zip(req.sections, m.section_tokens()):
            group = section_group(result.spec, section)
            orders.setdefault(group, []).append(section.fragment)
            sections[section.fragment] = SectionState(
                section.fragment, group, message.role, len(orders[group]), section.text, tokens, estimate, section.source
            )
        # Tools are parts like sections: shown as pretty JSON (so a diff reads
        # line by line), counted as their serialised definition is.
        for i, (tool, tokens, estimate) in enumerate(zip(req.tools, m.tool_counts, m.tool_estimates), 1):
            name = TOOL_PREFIX + tool.name
            orders.setdefault("tools", []).append(name)
            sections[name] = SectionState(name, "tools", "tools", i, pretty_json(tool.definition), tokens, estimate, tool.source)
        if req.params:
            sections[PARAMETERS] = SectionState(PARAMETERS, "parameters", "parameters", 0, pretty_json(dict(req.params)), 0, 0, "spec.yaml")
        base = SectionState(INSTRUCTIONS, "instructions", "instructions", 0, req.base.text, m.base, m.base_estimate, req.base.source)
        out[req.variant.id] = (m, request_hash(req), sections, base, {g: tuple(v) for g, v in orders.items()})
    return out


def _moves(before: dict[str, SectionState], after: dict[str, SectionState], ob: dict[str, tuple[str, ...]], oa: dict[str, tuple[str, ...]]) -> list[Move]:
    common = set(before) & set(after)
    moved: set[str] = {f for f in common if before[f].group != after[f].group}
    for group in sorted(set(ob) & set(oa)):
        seq_b = [f for f in ob[group] if f in common and after[f].group == group]
        seq_a = [f for f in oa[group] if f in common and before[f].group == group]
        if seq_b == seq_a:
            continue
        sm = difflib.SequenceMatcher(None, seq_b, seq_a, autojunk=False)
        kept = {seq_b[i + k] for i, _, n in sm.get_matching_blocks() for k in range(n)}
        moved |= set(seq_b) - kept
    out = []
    for f in sorted(moved, key=lambda f: (after[f].group, after[f].position)):
        b, a = before[f], after[f]
        out.append(Move(f, b.group, a.group, b.position, a.position, ob.get(b.group, ()), oa.get(a.group, ())))
    return out


def _unified(before: str | None, after: str | None, source_before: str, source_after: str) -> str:
    def lines(text: str | None) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    a, b = lines(before), lines(after)
    # difflib is quadratic (and worse) in the lines that differ: a 47 KB edit
    # took 25 s.  Past a budget on the changed middle (after the common
    # prefix and suffix), say how much differs instead of showing it.
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    mid_a, mid_b = len(a) - start - end, len(b) - start - end
    if mid_a * mid_b > MAX_DIFF_CELLS or mid_a + mid_b > MAX_DIFF_LINES:
        return (
            f"--- base/{source_before}\n+++ head/{source_after}\n"
            f"@@ -{start + 1},{mid_a} +{start + 1},{mid_b} @@ {mid_a} line(s) replaced by {mid_b}: "
            "too many changed lines to diff line by line; compare the files directly\n"
        )
    diff = difflib.unified_diff(a, b, f"base/{source_before}", f"head/{source_after}", n=3)
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff)


MAX_DIFF_LINES = 8_000
MAX_DIFF_CELLS = 2_000_000
"""Budget for one section's line diff: changed lines on both sides, and their
product (difflib's work).  2,000 x 1,000 changed lines diff in well under a second."""


def _digest(text: str | None) -> str:
    return "-" if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def compare(base_result, head_result, *, base_label: str = "base", head_label: str = "head", budget: int | None = None, files: Sequence[FileChange] = ()) -> Diff:
    """Compare two pipeline Results (see the module docstring)."""
    base, head = _sides(base_result), _sides(head_result)
    added = tuple(_totals(head[v][0]) for v in sorted(set(head) - set(base)))
    removed = tuple(_totals(base[v][0]) for v in sorted(set(base) - set(head)))
    unchanged: list[str] = []
    raw_changes: list[tuple[Any, ...]] = []  # (variant id, measures..., instr change, section changes, moves)
    # group key -> [fragment, kind, sources, before_text, after_text, variants, tokens, moves]
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add_group(key: tuple[Any, ...], fragment: str, kind: str, before: SectionState | None, after: SectionState | None, vid: str, move: Move | None = None) -> tuple[Any, ...]:
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"fragment": fragment, "kind": kind, "sources": set(), "before": before.text if before and kind != "moved" else None,
                               "after": after.text if after and kind != "moved" else None, "variants": [], "tokens": [], "moves": [],
                               "src_before": before.source if before else (after.source if after else ""),
                               "src_after": after.source if after else (before.source if before else "")}
        g["sources"].update(s.source for s in (before, after) if s is not None)
        g["variants"].append(vid)
        g["tokens"].append((vid, before.tokens if before else 0, after.tokens if after else 0))
        if move is not None:
            g["moves"].append(move)
        return key

    for vid in sorted(set(base) & set(head)):
        mb, hb, sb, ib, ob = base[vid]
        ma, ha, sa, ia, oa = head[vid]
        if hb == ha and mb.encoding == ma.encoding and mb.total == ma.total:
            unchanged.append(vid)
            continue
        instr = None
        if ib.text != ia.text:
            key = add_group(("text", INSTRUCTIONS, _digest(ib.text), _digest(ia.text)), INSTRUCTIONS, "changed", ib, ia, vid)
            instr = (SectionChange(INSTRUCTIONS, "changed", ib, ia), key)
        sections = []
        for frag in sorted(set(sb) | set(sa), key=lambda f: _order_key(sa.get(f) or sb[f])):
            b, a = sb.get(frag), sa.get(frag)
            if b is not None and a is not None and b.text == a.text:
                continue
            kind = "added" if b is None else "removed" if a is None else "changed"
            key = add_group(("text", frag, _digest(b.text if b else None), _digest(a.text if a else None)), frag, kind, b, a, vid)
            sections.append((SectionChange(frag, kind, b, a), key))
        moves = []
        for mv in _moves(sb, sa, ob, oa):
            key = add_group(("move", mv.fragment, mv.group_before, mv.group_after), mv.fragment, "moved", sb[mv.fragment], sa[mv.fragment], vid, mv)
            moves.append((mv, key))
        raw_changes.append((vid, mb, ma, instr, sections, moves))

    # Number groups: the widest changes first, then by name, so ids are stable.
    kind_rank = {"changed": 0, "added": 1, "removed": 2, "moved": 3}
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]["variants"]), kv[1]["fragment"] != INSTRUCTIONS, kv[1]["fragment"], kind_rank[kv[1]["kind"]], kv[0]))
    ids = {key: f"c{i}" for i, (key, _) in enumerate(ordered, 1)}
    built = tuple(
        ChangeGroup(
            id=ids[key],
            fragment=g["fragment"],
            kind=g["kind"],
            sources=tuple(sorted(g["sources"])),
            before_text=g["before"],
            after_text=g["after"],
            variants=tuple(g["variants"]),
            tokens=tuple(g["tokens"]),
            diff="" if g["kind"] == "moved" else _unified(g["before"], g["after"], g["src_before"], g["src_after"]),
            moves=tuple(g["moves"]),
        )
        for key, g in ordered
    )
    changed = []
    for vid, mb, ma, instr, sections, moves in raw_changes:
        changed.append(
            VariantChange(
                id=vid,
                total_before=mb.total,
                total_after=ma.total,
                estimate_before=mb.estimate,
                estimate_after=ma.estimate,
                encoding_before=mb.encoding,
                encoding_after=ma.encoding,
                headroom_before=mb.headroom,
                headroom_after=ma.headroom,
                instructions=_with_id(instr[0], ids[instr[1]]) if instr else None,
                sections=tuple(_with_id(s, ids[k]) for s, k in sections),
                moves=tuple(_move_with_id(m, ids[k]) for m, k in moves),
            )
        )
    status = {v: "unchanged" for v in unchanged}
    status.update({a.id: "added" for a in added})
    status.update({r.id: "removed" for r in removed})
    status.update({c.id: "changed" for c in changed})
    return Diff(base_label, head_label, added, removed, tuple(changed), tuple(unchanged), built, tuple(files), budget, status)


def _order_key(s: SectionState) -> tuple[int, int]:
    return (GROUP_ORDER.get(s.group, 4), s.position)


def _with_id(change: SectionChange, gid: str) -> SectionChange:
    return SectionChange(change.fragment, change.kind, change.before, change.after, gid)


def _move_with_id(move: Move, gid: str) -> Move:
    return Move(move.fragment, move.group_before, move.group_after, move.position_before, move.position_after, move.order_before, move.order_after, gid)


def _totals(m) -> VariantTotals:
    return VariantTotals(m.request.variant.id, m.total, m.estimate, m.headroom)


def file_changes(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[FileChange, ...]:
    """Compare two {path: digest} maps (gitspec.digest_tree) into a sorted list of file changes."""
    out = []
    for path in sorted(set(before) | set(after)):
        if path not in before:
            out.append(FileChange(path, "added"))
        elif path not in after:
            out.append(FileChange(path, "removed"))
        elif before[path] != after[path]:
            out.append(FileChange(path, "modified"))
    return tuple(out)


def compare_to_lock(lock_data: Mapping[str, Any], head_result) -> LockDiff:
    """How `head_result` differs from a lock (as read by lockfile.read): for `check` and site badges."""
    return lockfile.compare(lock_data, head_result)


# ---------------------------------------------------------------------------
# CI gate


def parse_increase(value: str) -> tuple[float, bool]:
    """`--fail-on-increase` value: "200" -> (200, False); "5%" -> (5.0, True)."""
    text = value.strip()
    percent = text.endswith("%")
    number = text[:-1].strip() if percent else text
    try:
        amount = float(number) if percent else int(number)
    except ValueError:
        raise ValueError(f"--fail-on-increase expects a number of tokens or a percentage such as 5%, got {value!r}") from None
    if amount < 0:
        raise ValueError(f"--fail-on-increase must not be negative, got {value!r}")
    return amount, percent


def increases_over(diff: Diff, amount: float, percent: bool) -> list[VariantChange]:
    """Changed variants whose total grew by more than the threshold (added variants have no base and are not counted)."""
    out = []
    for c in diff.changed:
        if percent:
            if c.delta > 0 and (c.total_before == 0 or 100.0 * c.delta / c.total_before > amount):
                out.append(c)
        elif c.delta > amount:
            out.append(c)
    return sorted(out, key=lambda c: (-c.delta, c.id))


# ---------------------------------------------------------------------------
# JSON


def _state_data(s: SectionState | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"group": s.group, "role": s.role, "position": s.position, "tokens": s.tokens, "codex_estimate": s.estimate, "source": s.source, "sha256": _digest(s.text)}


def _change_data(s: SectionChange) -> dict[str, Any]:
    return {"fragment": s.fragment, "kind": s.kind, "change": s.group_id, "tokens_before": s.tokens_before, "tokens_after": s.tokens_after,
            "delta": s.delta, "before": _state_data(s.before), "after": _state_data(s.after)}


def _variant_data(c: VariantChange) -> dict[str, Any]:
    return {
        "id": c.id,
        "total_before": c.total_before,
        "total_after": c.total_after,
        "delta": c.delta,
        "percent": None if c.percent is None else round(c.percent, 3),
        "codex_estimate_before": c.estimate_before,
        "codex_estimate_after": c.estimate_after,
        "encoding_before": c.encoding_before,
        "encoding_after": c.encoding_after,
        "headroom_before": c.headroom_before,
        "headroom_after": c.headroom_after,
        "crosses_headroom": c.crosses_headroom,
        "instructions": _change_data(c.instructions) if c.instructions else None,
        "sections": [_change_data(s) for s in c.sections],
        "moves": [
            {"fragment": m.fragment, "change": m.group_id, "group_before": m.group_before, "group_after": m.group_after,
             "position_before": m.position_before, "position_after": m.position_after,
             "order_before": list(m.order_before), "order_after": list(m.order_after)}
            for m in c.moves
        ],
    }


def _totals_data(t: VariantTotals) -> dict[str, Any]:
    return {"id": t.id, "total": t.total, "codex_estimate": t.estimate, "headroom": t.headroom}


def _group_data(g: ChangeGroup) -> dict[str, Any]:
    lo, hi = g.delta_range
    return {
        "id": g.id,
        "fragment": g.fragment,
        "kind": g.kind,
        "sources": list(g.sources),
        "variants": list(g.variants),
        "tokens": [{"variant": v, "before": b, "after": a, "delta": a - b} for v, b, a in g.tokens],
        "delta_min": lo,
        "delta_max": hi,
        "diff": g.diff,
        "before": g.before_text,
        "after": g.after_text,
    }


def to_json(diff: Diff) -> str:
    return json.dumps(diff.to_data(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


