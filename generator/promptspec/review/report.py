"""A `Diff` as a reviewer reads it: plain text for a terminal, Markdown for a
pull-request comment (size-capped, fences longer than their content), and the
JSON document (`--format json`).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from .change import INSTRUCTIONS, ChangeGroup, Diff, SectionChange, SectionState, VariantChange, VariantTotals, signed, text_digest
from ..util.gh_markdown import fenced, md_code, md_escape
from .worddiff import long_line_changes

# ---------------------------------------------------------------------------
# Shared formatting helpers



def _range(lo: int, hi: int) -> str:
    return signed(lo) if lo == hi else f"{signed(lo)}…{signed(hi)}"


def _tokens_range(values: Iterable[int]) -> str:
    vals = list(values)
    if not vals:
        return "-"
    lo, hi = min(vals), max(vals)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _group_title(g: ChangeGroup) -> str:
    if g.kind == "moved":
        m = g.moves[0]
        where = m.group_after if m.group_before == m.group_after else f"{m.group_before} → {m.group_after}"
        return f"{g.label} moved ({where})"
    return f"{g.label} {g.kind}"


def _move_positions(g: ChangeGroup) -> str:
    pairs = sorted({(m.group_before, m.position_before, m.group_after, m.position_after) for m in g.moves})
    parts = []
    for gb, pb, ga, pa in pairs[:6]:
        parts.append(f"#{pb} → #{pa}" if gb == ga else f"{gb} #{pb} → {ga} #{pa}")
    if len(pairs) > 6:
        parts.append(f"… {len(pairs) - 6} more")
    return ", ".join(parts)


def _changed(g: ChangeGroup) -> str:
    """The sources that changed behind a change, else (nothing recorded differs) what it is built from."""
    if g.changed_sources:
        return ", ".join(g.changed_sources)
    return "no recorded source differs (built from " + ", ".join(g.files) + ")"


def _section_note(s: SectionChange) -> str:
    return f"{s.fragment} {s.kind} {s.tokens_before}→{s.tokens_after} ({signed(s.delta)}) [{s.group_id}]"


def _variant_line(c: VariantChange) -> str:
    parts = [_section_note(s) for s in c.all_changes]
    parts += [f"{m.fragment} moved {m.group_before}#{m.position_before}→{m.group_after}#{m.position_after} [{m.group_id}]" for m in c.moves]
    if c.encoding_before != c.encoding_after:
        parts.append(f"encoding {c.encoding_before}→{c.encoding_after}")
    return "; ".join(parts)


def _variants_text(ids: Sequence[str], limit: int | None = None) -> str:
    shown = list(ids if limit is None else ids[:limit])
    more = len(ids) - len(shown)
    return ", ".join(shown) + (f", … and {more} more" if more > 0 else "")


# ---------------------------------------------------------------------------
# Text


def to_text(diff: Diff) -> str:
    out = [f"promptspec diff: {diff.base_label} -> {diff.head_label}"]
    out.append(f"variants: {len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.unchanged)} unchanged")
    if diff.headline():
        out.append(diff.headline())
    if diff.is_empty:
        out.append("no differences in any assembled request")
        return "\n".join(out) + "\n"
    if diff.files:
        out += ["", "files:"]
        f2v = diff.files_to_variants()
        for f in diff.files:
            touched = f2v[f.path]
            out.append(f"  {f.status:<8} {f.path}" + (f"  (reaches {len(touched)} variants)" if touched else "  (no assembled text changed)"))
    if diff.groups:
        out += ["", "changes (identical changes grouped):"]
        for g in diff.groups:
            extra = f" {_move_positions(g)}" if g.kind == "moved" else f" Δ {_range(*g.delta_range)} tokens"
            out.append(f"  [{g.id}] {_group_title(g)} in {diff.describe(g.variants)};{extra}; changed: {_changed(g)}")
    if diff.conversations:
        from .conversations import describe

        out += ["", "conversations (later requests of each thread):"] + [f"  {describe(c)}" for c in diff.conversations]
    alerts = _alerts(diff)
    if alerts:
        out += ["", "alerts:"] + [f"  {a}" for a in alerts]
    inc = diff.largest_increases()
    if inc:
        out += ["", "largest token increases:"]
        out += [f"  {c.id}  {c.total_before} -> {c.total_after} ({signed(c.delta)})" for c in inc]
    if diff.changed:
        out += ["", "changed variants:"]
        for c in diff.changed:
            out.append(f"  {c.id}  {c.total_before} -> {c.total_after} ({signed(c.delta)})")
            out.append(f"      {_variant_line(c)}")
    if diff.added:
        out += ["", "added variants:"] + [f"  {a.id}  {a.total} tokens" for a in diff.added]
    if diff.removed:
        out += ["", "removed variants:"] + [f"  {r.id}  {r.total} tokens" for r in diff.removed]
    for g in diff.groups:
        out += ["", f"=== [{g.id}] {_group_title(g)} — {diff.describe(g.variants)}"]
        out.append(f"changed: {_changed(g)}")
        out.append(f"built from: {', '.join(str(r) for r in g.refs) or ', '.join(g.sources)}")
        out.append(f"variants: {_variants_text(g.variants)}")
        if g.kind == "moved":
            m = g.moves[0]
            out.append(f"positions: {_move_positions(g)}")
            out.append(f"order before ({m.group_before}, e.g. {g.variants[0]}): {', '.join(m.order_before)}")
            out.append(f"order after  ({m.group_after}): {', '.join(m.order_after)}")
        else:
            out.append(f"tokens: {_tokens_range(b for _, b, _ in g.tokens)} -> {_tokens_range(a for _, _, a in g.tokens)} (Δ {_range(*g.delta_range)})")
            out.append(g.diff.rstrip("\n"))
    return "\n".join(out) + "\n"


def _alerts(diff: Diff) -> list[str]:
    """One line per kind of alert, its variants said by axis (as changes are), never one line a variant."""
    from .budgets import group_breaches

    out = []
    crossings = diff.headroom_crossings()
    if crossings:
        after = [a for _, _, a in crossings]
        out.append(f"{diff.describe([v for v, _, _ in crossings])}: now over the auto-compaction limit "
                   f"(headroom {_tokens_range(after)} after, by Codex's ⌈bytes/4⌉ estimate, which it compares with the limit)")
    over = diff.budget_crossings()
    if over:
        out.append(f"{diff.describe([v for v, _, _ in over])}: now over the budget of {diff.budget} tokens "
                   f"({_tokens_range(a for _, _, a in over)} tokens after)")
    out += [f"budget: {g.message(diff.describe)}" for g in group_breaches(diff.breaches)]
    return out


# ---------------------------------------------------------------------------
# Markdown (a pull-request comment)

# md_escape, md_code, fence_for and fenced: util/gh_markdown.py, shared by every writer for GitHub.


MIN_MARKDOWN_CHARS = 2000
COMMENT_CHARS = 60000
"""The default cap of a Markdown report (`diff`, `history` on standard output): a GitHub comment holds 65,536."""
MARKDOWN_ROWS = 100
"""Longest summary table / alert list in a comment; the rest is counted, not listed."""


def to_markdown(diff: Diff, *, max_chars: int = 60000, command: str | None = None) -> str:
    """A PR comment: summary table first, details in collapsed blocks, never over max_chars.

    Blocks are added in priority order; a block that does not fit is left out
    (a long diff is first cut to what fits) and a closing note says what was cut."""
    if max_chars < MIN_MARKDOWN_CHARS:
        raise ValueError(f"--max-chars must be at least {MIN_MARKDOWN_CHARS}")
    head: list[str] = [f"### promptspec: prompt changes {md_code(diff.base_label)} → {md_code(diff.head_label)}", ""]
    counts = f"{len(diff.changed)} changed · {len(diff.added)} added · {len(diff.removed)} removed · {len(diff.unchanged)} unchanged"
    if diff.is_empty:
        head += [f"Variants: {counts}", "", "No assembled request changed."]
        return "\n".join(head) + "\n"
    head.append(f"**{md_escape(diff.headline() or 'No variant changed its text')}** ({counts})")
    head.append("")
    blocks: list[tuple[str, str]] = []  # (what, markdown)

    alerts = _alerts(diff)
    if alerts:
        lines = [f"- :warning: {md_escape(a)}" for a in alerts[:MARKDOWN_ROWS]]
        if len(alerts) > MARKDOWN_ROWS:
            lines.append(f"- … and {len(alerts) - MARKDOWN_ROWS} more (see --format json)")
        blocks.append(("alerts", "**Alerts**\n\n" + "\n".join(lines) + "\n"))

    if diff.groups:
        rows = ["**Changes** (an identical change across variants is one item)", ""]
        for g in diff.groups[:MARKDOWN_ROWS]:
            rows.append(f"- {_md_group_line(diff, g)}")
        if len(diff.groups) > MARKDOWN_ROWS:
            rows.append(f"- … {len(diff.groups) - MARKDOWN_ROWS} more changes (see the blocks below or --format text)")
        blocks.append(("summary of changes", "\n".join(rows) + "\n"))

    if diff.conversations:
        from .conversations import describe

        lines = ["**Conversations** (every request of each script in `conversations:`)", ""]
        lines += [f"- {md_escape(describe(c))}" for c in diff.conversations[:MARKDOWN_ROWS]]
        blocks.append(("conversations", "\n".join(lines) + "\n"))
        for c in diff.conversations:
            blocks.append((f"conversation change {c.fragment}", _details(f"{md_code(c.fragment)} in conversations", "", c.diff)))

    if diff.files:
        f2v = diff.files_to_variants()
        items = [f"{md_code(f.path)} ({f.status}; " + (f"reaches {len(f2v[f.path])} variants)" if f2v[f.path] else "no assembled text changed)") for f in diff.files]
        blocks.append(("files", "**Spec files changed:** " + ", ".join(items) + "\n"))

    for g in diff.groups:
        blocks.append((f"change {g.id}", _group_block(g, open_=len(diff.groups) == 1, rule=_rule(diff, g))))

    inc = diff.largest_increases()
    if inc:
        rows = ["| variant | before | after | Δ | % |", "|---|---:|---:|---:|---:|"]
        rows += [f"| {md_code(c.id)} | {c.total_before} | {c.total_after} | {signed(c.delta)} | {'' if c.percent is None else f'{c.percent:+.1f}%'} |" for c in inc]
        blocks.append(("largest increases", _details(f"Largest token increases ({len(inc)})", "\n".join(rows) + "\n")))

    if diff.changed:
        rows = ["| variant | before | after | Δ | sections |", "|---|---:|---:|---:|---|"]
        for c in diff.changed:
            parts = [f"{md_code(s.fragment)} {signed(s.delta)} ({s.group_id})" for s in c.all_changes]
            parts += [f"{md_code(m.fragment)} moved ({m.group_id})" for m in c.moves]
            rows.append(f"| {md_code(c.id)} | {c.total_before} | {c.total_after} | {signed(c.delta)} | {', '.join(parts)} |")
        blocks.append(("changed variants table", _details(f"Changed variants ({len(diff.changed)})", "\n".join(rows) + "\n")))
    for what, items in (("added", diff.added), ("removed", diff.removed)):
        if items:
            rows = ["| variant | tokens | headroom before auto-compact |", "|---|---:|---:|"]
            rows += [f"| {md_code(t.id)} | {t.total} | {'–' if t.headroom is None else t.headroom} |" for t in items]
            blocks.append((f"{what} variants table", _details(f"{what.capitalize()} variants ({len(items)})", "\n".join(rows) + "\n")))

    text = "\n".join(head) + "\n"
    cut: list[str] = []
    reserve = 400
    for what, block in blocks:
        room = max_chars - reserve - len(text)
        if len(block) + 1 <= room:
            text += block + "\n"
            continue
        trimmed = _trim_block(what, block, room, diff)
        if trimmed is not None:
            text += trimmed + "\n"
            cut.append(f"part of {what}")
        else:
            cut.append(what)
    if cut:
        shown = ", ".join(cut[:8]) + (f" and {len(cut) - 8} more" if len(cut) > 8 else "")
        rerun = md_escape(command) if command else "this diff"
        note = f"> :scissors: Cut to fit {max_chars} characters: {md_escape(shown)}. Run {rerun} with --format text locally for everything."
        note = note[: max_chars - len(text) - 1] if len(text) + len(note) + 1 > max_chars else note
        text += note + "\n"
    return text


def _details(summary: str, body: str, diff_text: str = "", open_: bool = False) -> str:
    parts = [f"<details{' open' if open_ else ''}><summary>{summary}</summary>", "", body.rstrip("\n"), ""]
    if diff_text:
        parts.append(fenced(diff_text).rstrip("\n"))
        parts.append("")
    parts.append("</details>")
    return "\n".join(parts) + "\n"


def _md_section(g: ChangeGroup) -> str:
    if g.fragment == INSTRUCTIONS:
        return "base instructions"
    marker = f" {md_code(g.section)}" if g.section and g.section != f"({g.fragment})" else ""
    return f"section {md_code(g.fragment)}{marker}"


def _md_changed(g: ChangeGroup) -> str:
    if g.changed_sources:
        return "changed: " + ", ".join(md_code(s) for s in g.changed_sources)
    return "no recorded source differs; built from " + ", ".join(md_code(f) for f in g.files)


def _rule(diff: Diff, g: ChangeGroup) -> str:
    """The axis description of a change's variants, or "" when axis rules do not cover them all."""
    from .reach import summarise_ids

    reach = summarise_ids(g.variants, diff.universe, diff.axes)
    return reach.counted() if reach.by_axes else ""


def _md_group_line(diff: Diff, g: ChangeGroup) -> str:
    title = f"**{g.id}** {_md_section(g)} {md_escape(g.kind)}"
    if g.kind == "moved":
        m = g.moves[0]
        title += f" ({md_escape(m.group_after if m.group_before == m.group_after else m.group_before + ' → ' + m.group_after)}) {md_escape(_move_positions(g))}"
    else:
        title += f" · Δ {_range(*g.delta_range)} tokens"
    return f"{title} · {md_escape(diff.describe(g.variants))} · {_md_changed(g)}"


def _group_block(g: ChangeGroup, variant_limit: int = 80, diff_lines: int | None = None, open_: bool = False, rule: str = "") -> str:
    """One collapsed block per change; `variant_limit`/`diff_lines` shorten it to fit the cap."""
    summary = f"{g.id}: {_md_section(g)} {md_escape(g.kind)} in {len(g.variants)} variant{'s' if len(g.variants) != 1 else ''}"
    if g.kind == "moved":
        m = g.moves[0]
        body = [
            f"Positions in its message: {md_escape(_move_positions(g))}", "",
            f"Example ({md_code(g.variants[0])}), {md_escape(m.group_before)} before: {', '.join(md_code(f) for f in m.order_before)}", "",
            f"after ({md_escape(m.group_after)}): {', '.join(md_code(f) for f in m.order_after)}", "",
        ]
    else:
        summary += f", Δ {_range(*g.delta_range)} tokens"
        body = [f"Tokens {_tokens_range(b for _, b, _ in g.tokens)} → {_tokens_range(a for _, _, a in g.tokens)}; {_md_changed(g)}. "
                f"Built from: {', '.join(md_code(str(r)) for r in g.refs) or ', '.join(md_code(s) for s in g.sources)}", ""]
        words = long_line_changes(g.diff, md_escape)
        if words:
            body += ["Changed words in long lines:", ""] + [f"- {w}" for w in words] + [""]
    if rule:
        body.append(f"Variants: {md_escape(rule)}")
    elif variant_limit > 0:
        body.append(f"Variants: {md_escape(_variants_text(g.variants, variant_limit))}")
    else:
        body.append(f"Variants: {len(g.variants)} (list cut to fit)")
    body.append("")
    text = g.diff
    if diff_lines is not None:
        lines = g.diff.splitlines(keepends=True)
        if diff_lines < len(lines):
            text = "".join(lines[:diff_lines]) + f"… {len(lines) - diff_lines} more diff lines cut\n"
            summary += " (diff cut)"
    return _details(summary, "\n".join(body), text, open_=open_)


def _trim_block(what: str, block: str, room: int, diff: Diff) -> str | None:
    """For a change block that does not fit: list fewer variants, then keep as many diff lines as fit."""
    if not what.startswith("change ") or room < 400:
        return None
    g = diff.group(what.split(" ", 1)[1])
    rule = _rule(diff, g)  # summarised once for every candidate below
    for limit in (10, 0):
        candidate = _group_block(g, limit, rule=rule)
        if len(candidate) + 1 <= room:
            return candidate
    lo, hi, best = 0, len(g.diff.splitlines()), None
    while lo <= hi:  # the most diff lines that fit
        mid = (lo + hi) // 2
        candidate = _group_block(g, 0, mid, rule=rule)
        if len(candidate) + 1 <= room:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best


def format_diff(diff: Diff, fmt: str, *, max_chars: int = 60000, command: str | None = None) -> str:
    if fmt == "json":
        return to_json(diff)
    if fmt == "markdown":
        return to_markdown(diff, max_chars=max_chars, command=command)
    return to_text(diff)


# ---------------------------------------------------------------------------
# JSON: the `--format json` document (deterministic, JSON-ready)


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
            "sources": [r.to_data() for r in s.sources], "sha256": text_digest(s.text)}


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
