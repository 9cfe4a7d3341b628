"""A `Diff` as data: the `--format json` document (deterministic, JSON-ready)."""

from __future__ import annotations

import json

from typing import Any

from .diff import ChangeGroup, Diff, SectionChange, SectionState, VariantChange, VariantTotals, _digest


def diff_data(diff: Diff) -> dict[str, Any]:
    return {
        "base": diff.base_label,
        "head": diff.head_label,
        "headline": diff.headline(),
        "counts": {"changed": len(diff.changed), "added": len(diff.added), "removed": len(diff.removed), "unchanged": len(diff.unchanged)},
        "changes": [dict(_group_data(g), variants_summary=diff.describe(g.variants)) for g in diff.groups],
        "variants": {
            "changed": [_variant_data(c) for c in diff.changed],
            "added": [_totals_data(a) for a in diff.added],
            "removed": [_totals_data(r) for r in diff.removed],
            "unchanged": list(diff.unchanged),
        },
        "files": [{"path": f.path, "status": f.status, "variants": list(diff.files_to_variants()[f.path])} for f in diff.files],
        "reach": {path: list(vs) for path, vs in sorted(diff.reach.items())},
        "largest_increases": [{"id": c.id, "before": c.total_before, "after": c.total_after, "delta": c.delta} for c in diff.largest_increases()],
        "headroom_crossings": [{"id": v, "headroom_before": b, "headroom_after": a} for v, b, a in diff.headroom_crossings()],
        "budget": diff.budget,
        "budget_crossings": [{"id": v, "before": b, "after": a} for v, b, a in diff.budget_crossings()],
        "budget_breaches": [b.to_data() for b in diff.breaches],
        "conversations": [{"fragment": c.fragment, "reaches": {n: list(ids) for n, ids in c.reaches}, "requests": c.requests,
                           "delta": c.delta, "diff": c.diff} for c in diff.conversations],
    }




def _state_data(s: SectionState | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"group": s.group, "role": s.role, "position": s.position, "tokens": s.tokens, "codex_estimate": s.estimate, "source": s.source,
            "sources": [r.to_data() for r in s.sources], "sha256": _digest(s.text)}


def _change_data(s: SectionChange) -> dict[str, Any]:
    return {"fragment": s.fragment, "kind": s.kind, "change": s.group_id, "changed_sources": list(s.changed_sources), "tokens_before": s.tokens_before, "tokens_after": s.tokens_after,
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
            {"fragment": m.fragment, "change": m.group_id, "changed_sources": list(m.changed_sources), "group_before": m.group_before, "group_after": m.group_after,
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
        "section": g.section,
        "sources": list(g.sources),
        "changed_sources": list(g.changed_sources),
        "files": list(g.files),
        "changed_files": list(g.changed_files),
        "built_from": [r.to_data() for r in g.refs],
        "variants": list(g.variants),
        "tokens": [{"variant": v, "before": b, "after": a, "delta": a - b} for v, b, a in g.tokens],
        "delta_min": lo,
        "delta_max": hi,
        "diff": g.diff,
        "before": g.before_text,
        "after": g.after_text,
    }


def to_json(diff: Diff) -> str:
    """The `--format json` document: JSON-ready, deterministic."""
    return json.dumps(diff_data(diff), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
