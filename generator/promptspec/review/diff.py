"""Review: what a spec change does to every variant.

`compare(base, head)` takes two pipeline Results and returns a `Diff`: which
variants were added, removed or changed, and per changed variant which
sections changed (matched by fragment name), moved, appeared or disappeared,
with token counts on both sides.  Identical section changes are grouped -- the
same fragment going from the same old text to the same new text is *one*
change listing the variants it touched -- so one edit that reaches 40 variants
reads as one change.

Everything here is pure (Results in, dataclasses out); the dataclasses are
change.py's, the one model a lock comparison (lockfile.compare) produces too;
reading git and files lives in gitspec.py, the formats a reviewer reads in
report.py.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ..util import textdiff
from ..spec.provenance import SourceRef, paths_of
from ..spec.provenance import ordered as ordered_refs
from ..assemble.export import dumps as pretty_json
from .change import (
    GROUP_ORDER,
    INSTRUCTIONS,
    PARAMETERS,
    TOOL_PREFIX,
    AxisChange,
    ChangeGroup,
    Diff,
    FileChange,
    Move,
    SectionChange,
    SectionState,
    VariantChange,
    VariantTotals,
    axis_changes,
    source_path,
    status_map,
    text_digest,
)
from .lockfile import moved_fragments, part_refs, request_hash, section_group, source_pairs

# ---------------------------------------------------------------------------
# Comparing


def variant_states(result, only: Iterable[str] | None = None) -> dict[str, tuple[Any, str, dict[str, SectionState], SectionState, dict[str, tuple[str, ...]]]]:
    """variant id -> (measure, payload hash, sections by fragment, instructions, group orders); `only`: just these ids."""
    out = {}
    wanted = None if only is None else set(only)
    for m in result.measures:
        req = m.request
        if wanted is not None and req.variant.id not in wanted:
            continue
        sections: dict[str, SectionState] = {}
        orders: dict[str, list[str]] = {}
        for (_, message, section), (_, _, tokens, estimate) in zip(req.sections, m.section_tokens()):
            group = section_group(result.spec, section)
            orders.setdefault(group, []).append(section.fragment)
            sections[section.fragment] = SectionState(
                section.fragment, group, message.role, len(orders[group]), section.text, tokens, estimate, section.source,
                section.sources, section.label,
            )
        # Tools are parts like sections: shown as pretty JSON (so a diff reads
        # line by line), counted as their serialised definition is.
        refs = part_refs(req)
        for i, (tool, tokens, estimate) in enumerate(zip(req.tools, m.tool_counts, m.tool_estimates), 1):
            name = TOOL_PREFIX + tool.name
            orders.setdefault("tools", []).append(name)
            sections[name] = SectionState(name, "tools", "tools", i, pretty_json(tool.definition), tokens, estimate, tool.source,
                                          refs.get(name, ()), f"tool {tool.tool_name}")
        if req.params:
            sections[PARAMETERS] = SectionState(PARAMETERS, "parameters", "parameters", 0, pretty_json(dict(req.params)), 0, 0, "spec.yaml",
                                                refs.get(PARAMETERS, ()), "request parameters")
        base = SectionState(INSTRUCTIONS, "instructions", "instructions", 0, req.base.text, m.base, m.base_estimate, req.base.source,
                            req.base.sources, "base instructions")
        out[req.variant.id] = (m, request_hash(req), sections, base, {g: tuple(v) for g, v in orders.items()})
    return out


def _moves(before: dict[str, SectionState], after: dict[str, SectionState], ob: dict[str, tuple[str, ...]], oa: dict[str, tuple[str, ...]]) -> list[Move]:
    moved = moved_fragments({f: s.group for f, s in before.items()}, {f: s.group for f, s in after.items()}, ob, oa)
    out = []
    for f in sorted(moved, key=lambda f: (after[f].group, after[f].position)):
        b, a = before[f], after[f]
        out.append(Move(f, b.group, a.group, b.position, a.position, ob.get(b.group, ()), oa.get(a.group, ())))
    return out


def section_diff(before: str | None, after: str | None, label_before: str, label_after: str) -> str:
    """A unified diff of two section texts, headed by the section, not a file.

    Section texts rarely end in a newline; the `\\ No newline at end of file`
    line is only shown when the two sides differ in that (it is then the change)."""
    def lines(text: str | None, mark: bool) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n" if mark else "\n"
        return out

    mark = bool(before) and bool(after) and before.endswith("\n") != after.endswith("\n")  # type: ignore[union-attr]
    # Budgeted (util/textdiff.py): past it, the diff says how much differs instead of showing it.
    return textdiff.unified(lines(before, mark), lines(after, mark), label_before, label_after)


def diff_labels(fragment: str, section: str, changed: Sequence[str]) -> tuple[str, str]:
    """The `---`/`+++` lines of a section diff: the rendered section, and the files that changed."""
    name = "base instructions" if fragment == INSTRUCTIONS else f"section {fragment}"
    if section and fragment != INSTRUCTIONS and section != f"({fragment})":
        name += f" {section}"
    files = ", ".join(sorted({source_path(c) for c in changed}))
    return f"base: {name}", f"head: {name}" + (f" (changed: {files})" if files else "")


def _changed_refs(states: Iterable[SectionState | None], other_pairs: list[set[tuple[str, str]]], sides: Iterable[int]) -> set[SourceRef]:
    """The sources of these states whose content the other side does not have."""
    out: set[SourceRef] = set()
    for state, side in zip(states, sides):
        if state is None:
            continue
        pairs = other_pairs[1 - side]
        out |= {r for r in state.sources if (r.key, r.digest) not in pairs}
    return out


def compare(base_result, head_result, *, base_label: str = "base", head_label: str = "head", budget: int | None = None, files: Sequence[FileChange] = ()) -> Diff:
    """Compare two pipeline Results (see the module docstring)."""
    base, head = variant_states(base_result), variant_states(head_result)
    pairs = [source_pairs(base_result), source_pairs(head_result)]
    layout_ref = _layout_ref(base_result, head_result)
    added = tuple(_totals(head[v][0]) for v in sorted(set(head) - set(base)))
    removed = tuple(_totals(base[v][0]) for v in sorted(set(base) - set(head)))
    unchanged: list[str] = []
    raw_changes: list[tuple[Any, ...]] = []  # (variant id, measures..., instr change, section changes, moves)
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    reach: dict[str, set[str]] = {}

    def add_group(key: tuple[Any, ...], fragment: str, kind: str, before: SectionState | None, after: SectionState | None, vid: str,
                  changed: set[SourceRef], move: Move | None = None) -> tuple[Any, ...]:
        g = groups.get(key)
        if g is None:
            shown = after or before
            g = groups[key] = {"fragment": fragment, "kind": kind, "sources": set(), "changed": set(),
                               "before": before.text if before and kind != "moved" else None,
                               "after": after.text if after and kind != "moved" else None, "variants": [], "tokens": [], "moves": [], "refs": set(),
                               "section": shown.label if shown else ""}
        g["sources"].update(r.key for st in (before, after) if st is not None for r in st.sources)
        g["changed"].update(r.key for r in changed)
        g["refs"].update((after or before).sources)  # type: ignore[union-attr]
        if move is not None and layout_ref is not None:
            g["sources"].add(layout_ref.key)
        g["variants"].append(vid)
        g["tokens"].append((vid, before.tokens if before else 0, after.tokens if after else 0))
        for path in paths_of(changed):
            reach.setdefault(path, set()).add(vid)
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
            changed = _changed_refs((ib, ia), pairs, (0, 1))
            key = add_group(("text", INSTRUCTIONS, text_digest(ib.text), text_digest(ia.text)), INSTRUCTIONS, "changed", ib, ia, vid, changed)
            instr = (SectionChange(INSTRUCTIONS, "changed", ib, ia, "", _keys(changed)), key)
        sections = []
        for frag in sorted(set(sb) | set(sa), key=lambda f: _order_key(sa.get(f) or sb[f])):
            b, a = sb.get(frag), sa.get(frag)
            if b is not None and a is not None and b.text == a.text:
                continue
            kind = "added" if b is None else "removed" if a is None else "changed"
            changed = _changed_refs((b, a), pairs, (0, 1))
            key = add_group(("text", frag, text_digest(b.text if b else None), text_digest(a.text if a else None)), frag, kind, b, a, vid, changed)
            sections.append((SectionChange(frag, kind, b, a, "", _keys(changed)), key))
        moves = []
        for mv in _moves(sb, sa, ob, oa):
            changed = _changed_refs((sb[mv.fragment], sa[mv.fragment]), pairs, (0, 1))
            if layout_ref is not None and (layout_ref.key, layout_ref.digest) not in pairs[0]:
                changed.add(layout_ref)
            key = add_group(("move", mv.fragment, mv.group_before, mv.group_after), mv.fragment, "moved", sb[mv.fragment], sa[mv.fragment], vid, changed, mv)
            moves.append((Move(*[getattr(mv, f) for f in ("fragment", "group_before", "group_after", "position_before", "position_after", "order_before", "order_after")],
                               "", _keys(changed)), key))
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
            diff="" if g["kind"] == "moved" else section_diff(g["before"], g["after"], *diff_labels(g["fragment"], g["section"], sorted(g["changed"]))),
            moves=tuple(g["moves"]),
            changed_sources=tuple(sorted(g["changed"])),
            section=g["section"],
            refs=ordered_refs(g["refs"]),
        )
        for key, g in ordered
    )
    changed_variants = []
    for vid, mb, ma, instr, sections, moves in raw_changes:
        changed_variants.append(
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
    status = status_map(unchanged, (a.id for a in added), (r.id for r in removed), (c.id for c in changed_variants))
    reached = {path: tuple(sorted(vs)) for path, vs in sorted(reach.items())}
    axes = _axes(base_result, head_result)
    return Diff(base_label, head_label, added, removed, tuple(changed_variants), tuple(unchanged), built, tuple(files), budget, status, reached,
                axes, tuple(sorted(set(base) | set(head))), matched=tuple((v, v) for v in sorted(set(base) & set(head))),
                axis_changes=_axis_changes(base_result, head_result))


def _axes(base_result, head_result) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Head's axes, with values only the base has appended (for removed variants)."""
    try:
        head_axes, base_axes = head_result.spec.axes, dict(base_result.spec.axes)
    except AttributeError:
        return ()
    return tuple((a, tuple(vs) + tuple(v for v in base_axes.get(a, ()) if v not in vs)) for a, vs in head_axes)


def _axis_changes(base_result, head_result) -> tuple[AxisChange, ...]:
    """What the axes' values did between the two specs (values each side refuses included)."""
    try:
        b, h = base_result.spec, head_result.spec
    except AttributeError:
        return ()

    def refused(spec) -> dict[str, dict[str, str]]:
        return {a: dict(vals) for a, vals in (getattr(spec, "refuse", None) or {}).items()}

    return axis_changes(tuple(b.axes), tuple(h.axes), refused(b), refused(h))


def _keys(refs: Iterable[SourceRef]) -> tuple[str, ...]:
    return tuple(sorted({r.key for r in refs}))


def _layout_ref(base_result, head_result) -> SourceRef | None:
    from ..spec.provenance import field_ref

    try:
        return field_ref("spec.yaml", "layout", {k: list(v) for k, v in head_result.spec.layout.items()})
    except AttributeError:
        return None


def _order_key(s: SectionState) -> tuple[int, int]:
    return (GROUP_ORDER.get(s.group, 4), s.position)


def _with_id(change: SectionChange, gid: str) -> SectionChange:
    return SectionChange(change.fragment, change.kind, change.before, change.after, gid, change.changed_sources)


def _move_with_id(move: Move, gid: str) -> Move:
    return Move(move.fragment, move.group_before, move.group_after, move.position_before, move.position_after, move.order_before, move.order_after, gid,
                move.changed_sources)


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
